"""The classroom hub's login: each learner with their own password, the instructor with theirs.

``deploy/jupyterhub_config.py`` selects :class:`SlipAuthenticator`. A shared password would let any learner log
in as any other (the names learner01 … are sequential); here a password opens one account only. The passwords
come from ``DIR/secrets/hub.json`` (:mod:`nvcourse.devtools.hub_secrets`), the learners' printed on their slips.
"""

from __future__ import annotations

import hmac

from jupyterhub.auth import Authenticator
from traitlets import Dict, Unicode


class SlipAuthenticator(Authenticator):
    """Name + that name's own password (compared in constant time); nothing else logs in."""

    passwords = Dict(config=True, help="{learner name: that learner's password}")
    admin_password = Unicode(config=True, help="the password of the admin users (the instructor)")

    def expected(self, name: str) -> str:
        """The password that opens account ``name`` ("" when none does)."""
        if name in self.admin_users:
            return self.admin_password
        return str(self.passwords.get(name, ""))

    async def authenticate(self, handler, data: dict) -> str | None:
        name, given = str(data.get("username", "")), str(data.get("password", ""))
        expected = self.expected(name)
        if expected and hmac.compare_digest(given.encode(), expected.encode()):
            return name
        return None
