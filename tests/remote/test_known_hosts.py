"""Known-hosts policies against a real server: `accept-new` records a host seen for the first
time and refuses one whose key changed; `strict` trusts only what the file holds."""

from __future__ import annotations

import pytest

from justkernel.workers.executor import HostUnavailable
from justkernel.workers.ssh.transport import connect
from tests.remote.conftest import host_for
from tests.remote.sshd import SshServer, keygen, open_folder

pytestmark = pytest.mark.timeout(60)


async def test_accept_new_records_a_new_host_and_strict_then_trusts_it(
    sshd: SshServer, shared_scratch: str
) -> None:
    known = open_folder("jk-kh-") / "known_hosts"  # does not exist yet
    tofu = host_for(sshd, "tofu", shared_scratch, known_hosts="accept-new", known_hosts_file=known)
    conn = await connect(tofu)
    conn.close()
    recorded = known.read_text()
    assert recorded.startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
    assert recorded.split()[2] == (sshd.root / "host_key.pub").read_text().split()[1]

    strict = host_for(sshd, "strict", shared_scratch, known_hosts_file=known)
    conn = await connect(strict)  # what was recorded is now trusted under the strict policy
    conn.close()
    assert known.read_text() == recorded  # and nothing more was written


async def test_accept_new_refuses_a_host_whose_key_changed(
    sshd: SshServer, shared_scratch: str
) -> None:
    folder = open_folder("jk-kh-")
    impostor = keygen(folder / "impostor")
    known = folder / "known_hosts"
    key = (folder / "impostor.pub").read_text().split()
    known.write_text(f"[127.0.0.1]:{sshd.port} {key[0]} {key[1]}\n")
    host = host_for(sshd, "moved", shared_scratch, known_hosts="accept-new", known_hosts_file=known)
    with pytest.raises(HostUnavailable, match=r"host moved: host key .* not trusted"):
        await connect(host)
    assert known.read_text().count("\n") == 1  # the changed key was not recorded
    assert impostor.exists()


async def test_strict_without_a_known_hosts_file_says_so(
    sshd: SshServer, shared_scratch: str
) -> None:
    missing = open_folder("jk-kh-") / "absent"
    host = host_for(sshd, "nofile", shared_scratch, known_hosts_file=missing)
    with pytest.raises(HostUnavailable, match=r"host nofile: known_hosts file .*absent"):
        await connect(host)
