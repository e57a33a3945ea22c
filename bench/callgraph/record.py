"""Record the call graph a case of the call-graph suite really makes, by running it.

    python3 bench/callgraph/record.py bench/callgraph/<category>/<case> [--write]

Runs the case's `main.py` with the case folder first on `sys.path` (as `python3 main.py` would)
and records every call between the case's own functions with `sys.setprofile`. The result is
the case's expected graph, `callgraph.json`: PyCG's simple format, restricted to the case's own
code (every module and function that ran is a key; its callees are the case functions it
called). `--write` writes it; without it, the graph is printed.

Naming follows `synclint graph`: a module is its path below the case folder, dotted (a
package's `__init__.py` is the package); a function is its module and its qualified name, with
`<locals>` steps left out. Code that is no function of its own is part of the function it is
written in: a lambda, a comprehension, a class body (at module level, the module's). A call made
by code outside the case (a builtin such as `map`, the standard library) is the call of the
nearest case function below it on the stack when it runs: the function that handed over the
callable, or the one that consumes a lazy `map` another made. Resuming a generator is a call of
it by the function that resumes it.

The graph holds only functions that ran, and only calls that ran; a case runs every function and
every path it means to test. A function that never runs has no key, and the suite does not score
what a static graph says it calls (its body's calls are real, but nothing here recorded them).
"""

import json
import os
import runpy
import sys

# Code objects of class bodies have neither flag; functions, lambdas and comprehensions have both.
CO_OPTIMIZED = 0x0001
CO_NEWLOCALS = 0x0002


def node_of(code, root):
    """The graph node a code object of the case belongs to, or None for code outside the case."""
    path = os.path.realpath(code.co_filename)
    if not path.startswith(root + os.sep) or not path.endswith(".py"):
        return None
    parts = os.path.relpath(path, root)[: -len(".py")].split(os.sep)
    if parts[-1] == "__init__":
        parts.pop()
    module = ".".join(parts)
    if code.co_name == "<module>":
        return module
    steps = [step for step in code.co_qualname.split(".") if step != "<locals>"]
    # A class body belongs to the scope it is written in; so do lambdas and comprehensions.
    if not code.co_flags & (CO_OPTIMIZED | CO_NEWLOCALS):
        steps.pop()
    while steps and steps[-1].startswith("<"):
        steps.pop()
    return ".".join([module, *steps]) if steps else module


def main():
    case = os.path.realpath(sys.argv[1])
    write = "--write" in sys.argv[2:]
    graph = {}

    def profile(frame, event, _arg):
        if event != "call":
            return
        code = frame.f_code
        callee = node_of(code, case)
        if callee is None:
            return
        graph.setdefault(callee, set())
        # Entering a lambda, a comprehension or a class body is no call of a node: they are
        # part of the function they are written in.
        if code.co_name.startswith("<") or not code.co_flags & (CO_OPTIMIZED | CO_NEWLOCALS):
            return
        caller_frame = frame.f_back
        while caller_frame is not None:
            caller = node_of(caller_frame.f_code, case)
            if caller is not None:
                graph.setdefault(caller, set()).add(callee)
                return
            caller_frame = caller_frame.f_back

    sys.path.insert(0, case)
    os.chdir(case)
    sys.setprofile(profile)
    try:
        runpy.run_path(os.path.join(case, "main.py"), run_name="__main__")
    finally:
        sys.setprofile(None)
    # `main.py` runs as `__main__`, but its code is the module `main`.
    graph.setdefault("main", set())
    result = {node: sorted(callees) for node, callees in sorted(graph.items())}
    text = json.dumps(result, indent=2) + "\n"
    if write:
        with open(os.path.join(case, "callgraph.json"), "w") as out:
            out.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
