"""Flow definitions: YAML text -> frozen AST -> diagnostics.

Pipeline (pure Python: no I/O, no clock)::

    text --parse_flow--> ParseResult(flow, diagnostics)        parser.py
              yaml_tree.py composes the document with line/column on every node; one pass
              builds complete frozen AST nodes: the document and scopes (parser.py), the states
              with their templates and rules (state_builder.py), reading and coercing fields
              (fields.py). Node types: ast.py (states, scopes, flow), template_nodes.py,
              positions.py. Only YAML-level problems are reported here: syntax (FDL001),
              duplicate keys, non-mapping states...
    flow --validate_flow--> diagnostics                         validator.py
              a separate pass: fields and types (schema.py), names and transitions
              (transitions.py), the legacy dialect, header and Timeout of the flow
              (flow_checks.py), limits of one state (state_checks.py), expressions and
              templates (expression_checks.py), Retry/Catch (rule_checks.py), a Task's mode,
              Action and parameters (task_checks.py).

Both report :class:`~deployer.fdl.syntax.diagnostics.Diagnostic` values (diagnostics.py).
Expressions are kept as text in the AST (:class:`~deployer.fdl.syntax.positions.Expr`); the
validator parses them with :mod:`deployer.fdl.expressions` to check them.
"""
