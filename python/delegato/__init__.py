"""delegato: a TFLite runtime and toolkit.

- ``delegato.interpreter``: a drop-in for ``tflite_runtime.interpreter`` /
  ``ai_edge_litert.interpreter``.
- ``plan``, ``fix``, ``diff``, ``bench``: the CLI's commands as Python
  objects. Each runs the same C++ code as ``delegato <command>`` (in-process)
  and reads its JSON answer; nothing is computed here.
"""

import json
import os
import tempfile

_extension_dir = os.environ.get("DELEGATO_EXTENSION_DIR")
if _extension_dir:  # a build tree's delegato/_core*.so, for tests run without installing
    __path__.append(_extension_dir)  # noqa: F821  (the package's own __path__)

# Installed wheels carry the targets in the package; the CLI's own fallbacks
# (the source tree, <bin>/../share) come after.
_package_targets = os.path.join(os.path.dirname(__file__), "targets")
if "DELEGATO_TARGETS_DIR" not in os.environ and os.path.isdir(_package_targets):
    os.environ["DELEGATO_TARGETS_DIR"] = _package_targets

from delegato import _core  # noqa: E402

__version__ = _core.__version__
__all__ = ["plan", "fix", "diff", "bench", "run_command", "Plan", "CommandError", "list_targets",
           "plugin_path"]


def plugin_path():
    """The path of delegato's TFLite external delegate plugin
    (``libdelegato_delegate.so``): shipped in the installed package, or beside
    a build tree's extension. For ``load_delegate(delegato.plugin_path(),
    {'target': ...})`` in LiteRT or in ``delegato.interpreter``."""
    candidates = [os.path.join(os.path.dirname(__file__), "libdelegato_delegate.so")]
    if _extension_dir:  # <build>/python/delegato -> <build>/libdelegato_delegate.so
        candidates.append(os.path.join(_extension_dir, "..", "..", "libdelegato_delegate.so"))
    for path in candidates:
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise FileNotFoundError("libdelegato_delegate.so not found in " + ", ".join(candidates))


class CommandError(RuntimeError):
    """A delegato command failed; the message is the CLI's error text."""

    def __init__(self, command, code, stderr):
        super().__init__(stderr.strip() or "delegato {} exited with {}".format(command, code))
        self.command, self.code, self.stderr = command, code, stderr


def _flags(options):
    """{'num_runs': 5, 'per_layer': True} -> ['--num_runs=5', '--per_layer=true']"""
    args = []
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        args.append("--{}={}".format(name, os.fspath(value) if hasattr(value, "__fspath__") else value))
    return args


def run_command(command, *args, ok_codes=(0,)):
    """Runs ``delegato <command> <args>`` in-process: returns (code, stdout, stderr).

    Raises CommandError when the exit code is not in ``ok_codes``.
    """
    code, out, err = _core.run_command(command, [str(a) for a in args])
    if code not in ok_codes:
        raise CommandError(command, code, err)
    return code, out, err


def _model_path(model):
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise ValueError("Could not open '{}'.".format(path))
    return path


def list_targets():
    """{target id: description} of the shipped accelerator targets."""
    # `plan --list_targets` prints each id unindented, then indented lines:
    # "version: ...", the description, "sources:" and their URLs.
    _, out, _ = run_command("plan", "--list_targets")
    targets, current = {}, None
    for line in out.splitlines():
        if line and not line[0].isspace():
            current = line.strip()
            targets[current] = ""
        elif current is not None and line.startswith("  ") and not line.startswith("   ") \
                and not targets[current]:
            text = line.strip()
            if not text.startswith(("version:", "sources:")):
                targets[current] = text
    return targets


class Plan:
    """Where each node of a model runs on a target, and why (``delegato plan``).

    Attributes: ``nodes`` (dicts with index, op, placement, reason, fix, ...),
    ``partitions`` (the execution plan: delegate / cpu node runs), ``estimate``
    (the cost model's figures, labelled as estimates), ``alternatives`` (the
    greedy / cost-aware / CPU-only estimates), ``recommendation``, ``summary``,
    and the whole JSON document as ``data``.
    """

    def __init__(self, data, html):
        self.data = data
        self._html = html
        self.model = data["model"]
        self.target = data["target"]
        self.summary = data["summary"]
        self.estimate = data["estimate"]
        self.alternatives = data.get("alternatives", {})
        self.recommendation = data.get("recommendation", {})
        self.partitions = data["execution_plan"]
        self.nodes = []
        for node in data["nodes"]:
            reasons = node["reasons"]
            self.nodes.append(dict(node,
                                   reason="; ".join(r["message"] for r in reasons),
                                   fix="; ".join(r["fix"] for r in reasons if r["fix"])))

    @property
    def delegated_nodes(self):
        return [n["index"] for n in self.nodes if n["placement"] == "delegate"]

    @property
    def cpu_nodes(self):
        return [n["index"] for n in self.nodes if n["placement"] == "cpu"]

    def to_json(self, indent=2):
        return json.dumps(self.data, indent=indent)

    def to_html(self):
        return self._html

    def _repr_html_(self):
        return self._html

    def __repr__(self):
        return "<delegato.Plan {}>".format(self.summary)


def _with_temp_dir(body):
    with tempfile.TemporaryDirectory(prefix="delegato-") as tmp:
        return body(tmp)


def plan(model, target, **options):
    """Plans ``model`` (a .tflite path) on ``target`` (id or .json path).

    ``options`` are ``delegato plan``'s flags without dashes, e.g.
    ``max_delegated_partitions=1``, ``skip_nodes=[3, 4]``.
    """
    path = _model_path(model)

    def body(tmp):
        html_path = os.path.join(tmp, "plan.html")
        _, out, _ = run_command("plan", "--graph=" + path, "--target=" + os.fspath(target),
                                "--format=json", "--html=" + html_path, *_flags(options))
        with open(html_path, encoding="utf-8") as f:
            return Plan(json.loads(out), f.read())
    return _with_temp_dir(body)


def bench(model=None, **options):
    """Benchmarks ``model`` like ``delegato bench`` (benchmark_model's flags,
    e.g. ``num_runs=20``, ``num_threads=2``, ``target='imx8mp-vx'``,
    ``enable_op_profiling=True``); returns its JSON report as a dict."""
    args = ["--format=json"] + _flags(options)
    if model is not None:
        args.insert(0, "--graph=" + _model_path(model))
    _, out, _ = run_command("bench", *args)
    return json.loads(out)


def diff(model=None, **options):
    """Compares a configuration with the reference kernels, per output and
    (``per_layer=True``) per layer, like ``delegato diff``; returns its JSON
    report as a dict. A ``max_abs_error`` breach is reported, not raised
    (``report['exit_code'] == 3``)."""
    args = ["--format=json"] + _flags(options)
    if model is not None:
        args.insert(0, "--graph=" + _model_path(model))
    code, out, _ = run_command("diff", *args, ok_codes=(0, 3))
    report = json.loads(out)
    report["exit_code"] = code
    return report


def fix(model, target, **options):
    """Rewrites ``model`` for ``target`` (``delegato fix``): returns
    ``(model_bytes, report)``, model_bytes None with ``dry_run=True`` or when
    ``verify=True`` refused the rewrite."""
    path = _model_path(model)

    def body(tmp):
        out_path = os.path.join(tmp, "fixed.tflite")
        report_path = os.path.join(tmp, "report.json")
        args = ["--graph=" + path, "--target=" + os.fspath(target), "--report_json=" + report_path]
        if not options.get("dry_run"):
            args.append("-o=" + out_path)
        code, out, err = run_command("fix", *args, *_flags(options), ok_codes=(0, 3))
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
        report["exit_code"] = code
        data = None
        if os.path.isfile(out_path):
            with open(out_path, "rb") as f:
                data = f.read()
        return data, report
    return _with_temp_dir(body)
