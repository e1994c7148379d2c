"""The command line: `entry` is the console script (it sends `create` to its virtctl-exact parser
and every other command to the click group of `main`).

`EMPTY_STATE` lives here because both refuse `--state ""` with the same words, and `entry` must
not import `main` for it (that would load click for `create`).
"""

EMPTY_STATE = "--state: the path is empty (name the state file, or leave --state out for the default)"
