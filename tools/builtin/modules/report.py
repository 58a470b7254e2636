"""What validation says: :class:`Finding`, :class:`ValidationReport`, :class:`Attestation`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Attestation", "Finding", "Stage", "ValidationReport"]

Stage = Literal["manifest", "static", "dynamic"]


class Finding(BaseModel):
    """One problem validation found, with where it is.

    Attributes:
        stage: ``manifest`` (the manifest or the file set), ``static`` (the code scan) or
            ``dynamic`` (the module's tests in the sandbox).
        file: The module file, e.g. ``adapter.py``.
        line: The 1-based line, when known.
        rule: A short rule name, e.g. ``forbidden-import``.
        message: What is wrong and how to fix it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: Stage
    file: str
    line: int | None = None
    rule: str
    message: str

    def where(self) -> str:
        """``adapter.py:12`` (or just the file)."""
        return f"{self.file}:{self.line}" if self.line is not None else self.file


class Attestation(BaseModel):
    """Proof that the files with ``files_hash`` passed validation, signed by this installation.

    Pass it unchanged to ``install`` (copy the whole object from the ``validate`` result).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    module_id: str = Field(max_length=40, description="The validated module.")
    target: str = Field(max_length=40, description="'module' (the build area) or 'draft:<draft_id>'.")
    files_hash: str = Field(max_length=80, description="Hash of the validated files.")
    issued_at: str = Field(max_length=40, description="When validation passed.")
    signature: str = Field(max_length=128, description="The installation's signature; cannot be made by hand.")

    def signed_fields(self) -> dict[str, str]:
        """The fields the signature covers."""
        return self.model_dump(exclude={"signature"})


class ValidationReport(BaseModel):
    """The outcome of validating a module's files.

    Attributes:
        module_id: The module.
        target: ``module`` or ``draft:<draft_id>``.
        files_hash: Hash of the files that were validated.
        passed: True when nothing was found and the tests passed.
        findings: Every problem, with file and line.
        tests_run: How many tests ran in the sandbox (0 when they did not run).
        tests_note: Why the tests did not run, or a summary.
        validated_at: When.
        attestation: Present when ``passed``: what ``install`` (or ``promote_draft``) needs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    module_id: str
    target: str
    files_hash: str
    passed: bool
    findings: list[Finding] = Field(default_factory=list)
    tests_run: int = 0
    tests_note: str = ""
    validated_at: str
    attestation: Attestation | None = None
