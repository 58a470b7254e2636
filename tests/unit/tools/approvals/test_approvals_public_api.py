"""Pins the public names of tools.approvals (DESIGN section 11): a rename is a breaking change."""

from __future__ import annotations

import importlib
import subprocess
import sys

PUBLIC = [
    "FreedomLevel",
    "ApprovalsStore",
    "ApprovalPolicy",
    "ApprovalCheck",
    "Approve",
    "Deny",
    "ApprovalRequest",
    "ApprovedCall",
    "Approver",
    "ToolApproval",
    "ApprovalsFile",
    "arguments_hash",
    "tool_version_hash",
    "freedom_from_env",
    "call_with_approval",
    "ApprovalError",
    "ApprovalsFileError",
    "InvalidFreedomLevelError",
    "InvalidApprovalIdError",
    "DEFAULT_FREEDOM",
    "FREEDOM_VARIABLE",
    "StateSigner",
    "StateSignatureError",
    "StateKeyError",
    "STATE_KEY_FILE",
    "STATE_KEY_FILE_VARIABLE",
    "Preview",
    "approval_preview",
    "files_diff",
]


def test_public_names_importable_from_tools_approvals() -> None:
    module = importlib.import_module("tools.approvals")
    assert [n for n in PUBLIC if not hasattr(module, n)] == []
    assert set(PUBLIC) <= set(module.__all__)
    assert sorted(module.__all__) == sorted(set(module.__all__))


def test_import_tools_does_not_load_approvals() -> None:
    code = "import sys, tools; tools.LocalToolRegistry(); print('tools.approvals' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "False"


def test_errors_are_tooldeck_errors() -> None:
    from tools.approvals import ApprovalError, ApprovalsFileError, InvalidApprovalIdError, InvalidFreedomLevelError
    from tools.errors import TooldeckError

    assert issubclass(ApprovalError, TooldeckError)
    for error in (ApprovalsFileError, InvalidApprovalIdError, InvalidFreedomLevelError):
        assert issubclass(error, ApprovalError)
    assert issubclass(InvalidFreedomLevelError, ValueError)
    assert issubclass(InvalidApprovalIdError, ValueError)
