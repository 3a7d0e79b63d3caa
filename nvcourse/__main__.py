import sys

try:
    from .cli import main
except KeyboardInterrupt:  # Ctrl-C while the interpreter imports: no traceback either
    sys.stderr.write("nvcourse: interrupted (Ctrl-C)\n")
    sys.exit(130)

sys.exit(main())
