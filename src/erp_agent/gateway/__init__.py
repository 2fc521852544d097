"""The gateway: the ONE place a tool runs. Permission, validation, proposals, audit."""
