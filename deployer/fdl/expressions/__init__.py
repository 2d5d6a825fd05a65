"""The expression language: text -> nodes -> closures -> JSON values.

Pipeline (pure Python: no I/O, no clock)::

    text --parse_expression--> Expression                        parser.py
              lexer.py tokens, a precedence-climbing parser, nodes in nodes.py; syntax
              errors in errors.py; cached per text.
    expression --evaluate(expression, ExpressionScope)--> value  evaluator.py
              compiled once into closures: member access and calls (evaluator.py), operators
              (operators.py), the scope and null mode (scope.py), built-in functions
              (builtins.py; regexMatchString on RE2: regex.py), the JSON value model
              (values.py); every evaluation is bounded in steps by budget.py's Meter.
    template --build_value / compile_template--> value           constructors.py
              InputConstructor, OutputConstructor, Parameters...: ``.$`` keys are expressions.
"""
