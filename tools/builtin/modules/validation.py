"""``ModuleValidator``: static scan, then the tests in the sandbox, then a signed attestation.

Validation of a module's files (its build area, or a draft) runs the
:class:`~tools.builtin.modules.scan.StaticScanner`; only when it finds nothing do the
module's tests run through the :class:`~tools.builtin.modules.sandbox_runner.ModuleTestRunner`.
A report without findings and with passing tests carries an :class:`Attestation`: the
files' hash, the target and the time, signed with the store's signing key. ``install``
and ``promote_draft`` accept only an attestation whose signature verifies and whose hash
equals the hash of the files *now*, so any change after validation invalidates it, and an
attestation for other code (or one written by hand) is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from shared.modules import Signer, files_hash
from tools.builtin.modules.report import Attestation, Finding, ValidationReport
from tools.builtin.modules.sandbox_runner import ModuleTestRunner
from tools.builtin.modules.scan import StaticScanner
from tools.builtin.modules.store import utc_iso

__all__ = ["ModuleValidator"]


class ModuleValidator:
    """Validates module files and checks attestations.

    Args:
        scanner: The static stage.
        runner: The dynamic stage (runs the module's tests in a sandbox).
        signer: Signs and verifies attestations (the store's signing key).
        clock: Returns the current time as ISO 8601 text.
    """

    def __init__(
        self,
        *,
        scanner: StaticScanner,
        runner: ModuleTestRunner,
        signer: Signer,
        clock: Callable[[], str] = utc_iso,
    ) -> None:
        self._scanner = scanner
        self._runner = runner
        self._signer = signer
        self._clock = clock

    def validate(self, module_id: str, files: Mapping[str, bytes], *, target: str = "module") -> ValidationReport:
        """Validate ``files`` of ``module_id``; ``target`` is ``module`` or ``draft:<id>``."""
        digest = files_hash(files)
        manifest, findings = self._scanner.scan(files)
        if manifest is not None and manifest.id != module_id:
            findings.append(
                Finding(
                    stage="manifest",
                    file="manifest.json",
                    rule="manifest",
                    message=f"the manifest's id is {manifest.id!r}, but the module is {module_id!r}; put it back.",
                )
            )
        ran, note = 0, ""
        if findings:
            note = "tests not run: fix the findings above first"
        else:
            run = self._runner.run_tests(files)
            ran, note = run.ran, run.note
            findings.extend(run.findings)
            if not run.passed and not run.findings:  # pragma: no cover - runners always explain
                findings.append(Finding(stage="dynamic", file="test_adapter.py", rule="tests", message=note))
        now = self._clock()
        attestation = None
        if not findings:
            unsigned = {"module_id": module_id, "target": target, "files_hash": digest, "issued_at": now}
            attestation = Attestation(**unsigned, signature=self._signer.sign("attestation", unsigned))
        return ValidationReport(
            module_id=module_id,
            target=target,
            files_hash=digest,
            passed=not findings,
            findings=findings,
            tests_run=ran,
            tests_note=note,
            validated_at=now,
            attestation=attestation,
        )

    def check(self, attestation: Attestation, *, module_id: str, target: str, files: Mapping[str, bytes]) -> str | None:
        """None when ``attestation`` vouches for exactly ``files`` of ``module_id`` as ``target``;
        otherwise what is wrong, written for the model."""
        if not self._signer.verify("attestation", attestation.signed_fields(), attestation.signature):
            return (
                "the attestation's signature is not valid: only an attestation returned by validate is "
                "accepted, unchanged"
            )
        if attestation.module_id != module_id or attestation.target != target:
            return (
                f"the attestation is for {attestation.module_id!r} ({attestation.target}), not for "
                f"{module_id!r} ({target})"
            )
        if attestation.files_hash != files_hash(files):
            return "the module's files changed after validation (the attestation is for other code)"
        return None
