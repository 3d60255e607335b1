"""The one error type users see: a single line that says what, where and how to fix."""


class TrainwellError(Exception):
    """A mistake in the user's input or setup, reported as one line.

    The CLI prints ``trainwell: error: <message>`` and exits with ``exit_code``
    (2 for usage and configuration mistakes, 1 for failures during a run).
    """

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code
