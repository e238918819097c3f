"""Stand-in for helpers/print_style.py: same call surface, plain printing."""


class PrintStyle:
    def __init__(self, bold=False, italic=False, underline=False, font_color="default",
                 background_color="default", padding=False, log_only=False):
        self.log_only = log_only

    @staticmethod
    def _text(args, sep=" "):
        return sep.join(str(a) for a in args)

    def get(self, *args, sep=" ", **kwargs):
        return self._text(args, sep)

    def print(self, *args, sep=" ", end="\n", flush=True):
        if not self.log_only:
            print(self._text(args, sep), end=end, flush=flush)

    def stream(self, *args, sep=" ", flush=True):
        if not self.log_only:
            print(self._text(args, sep), end="", flush=flush)

    @staticmethod
    def _prefixed(prefix, args, sep, end, flush):
        print(prefix, *args, sep=sep, end=end, flush=flush)

    @staticmethod
    def standard(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("", args, sep, end, flush)

    @staticmethod
    def hint(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Hint:", args, sep, end, flush)

    @staticmethod
    def info(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Info:", args, sep, end, flush)

    @staticmethod
    def success(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Success:", args, sep, end, flush)

    @staticmethod
    def warning(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Warning:", args, sep, end, flush)

    @staticmethod
    def debug(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Debug:", args, sep, end, flush)

    @staticmethod
    def error(*args, sep=" ", end="\n", flush=True):
        PrintStyle._prefixed("Error:", args, sep, end, flush)
