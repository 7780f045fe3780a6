"""A real single-node SLURM cluster on loopback, for the tests: munged, slurmctld and slurmd
(Debian's ``slurm-wlm`` and ``munge``) started in a temporary folder and stopped after.

Everything lives under one folder: the munge key and socket, slurm.conf, state, spool,
logs. Commands reach this cluster through ``SLURM_CONF`` (set by :meth:`Cluster.env`).
Ports are picked free, so two test sessions on one machine do not collide.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DAEMONS = ("munged", "slurmctld", "slurmd")


def missing_binaries() -> list[str]:
    return [d for d in DAEMONS if shutil.which(d) is None and not Path(f"/usr/sbin/{d}").exists()]


def ensure_installed() -> str | None:
    """None when the daemons are there (installed now if missing and we are root); else why not."""
    if not missing_binaries():
        return None
    if os.geteuid() != 0:
        return f"SLURM daemons missing ({', '.join(missing_binaries())}) and not root to install them"
    subprocess.run(["bash", str(REPO / "scripts" / "install-system-deps.sh")], check=True)
    return f"install-system-deps.sh did not install {', '.join(missing_binaries())}" if missing_binaries() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


SLURM_CONF = """\
ClusterName=posbench-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=3
MinJobAge=600
InactiveLimit=0
SlurmdTimeout=60
SchedulerParameters=sched_interval=1
NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class Cluster:
    dir: Path
    conf: Path
    processes: list

    def env(self) -> dict:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str, check: bool = True) -> str:
        done = subprocess.run(command, env=self.env(), capture_output=True, text=True)
        if check and done.returncode:
            raise RuntimeError(f"{' '.join(command)}: exit {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(self.dir.glob("*.log")))

    def stop(self) -> None:
        for proc in reversed(self.processes):
            proc.terminate()
        for proc in reversed(self.processes):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def start(folder: Path, timeout_s: float = 60.0) -> Cluster:
    """munged, slurmctld and slurmd in the foreground of background processes; returns
    when `sinfo` shows the node idle (raises with the daemons' logs if it never does)."""
    for sub in ("state", "spool", "munge"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(folder / "munge", 0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    os.chmod(key, 0o400)
    munge_socket = folder / "munge" / "munge.socket"
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.format(dir=folder, munge_socket=munge_socket, ctld_port=_free_port(), d_port=_free_port()))
    cluster = Cluster(folder, conf, [])
    out = open(folder / "daemons.out", "w")
    cluster.processes.append(subprocess.Popen(
        [_daemon("munged"), "--foreground", "--force", f"--key-file={key}", f"--socket={munge_socket}",
         f"--pid-file={folder}/munge/munged.pid", f"--log-file={folder}/munged.log",
         f"--seed-file={folder}/munge/munged.seed"], stdout=out, stderr=subprocess.STDOUT))
    _wait(lambda: munge_socket.exists(), timeout_s, cluster, "munged socket")
    env = cluster.env()
    cluster.processes.append(subprocess.Popen([_daemon("slurmctld"), "-D", "-i", "-f", str(conf)], env=env,
                                              stdout=out, stderr=subprocess.STDOUT))
    cluster.processes.append(subprocess.Popen([_daemon("slurmd"), "-D", "-N", "localhost", "-f", str(conf)], env=env,
                                              stdout=out, stderr=subprocess.STDOUT))
    _wait(lambda: cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False).strip() == "idle", timeout_s, cluster,
          "the node to be idle in sinfo")
    return cluster


def _wait(ready, timeout_s: float, cluster: Cluster, what: str) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if ready():
            return
        if any(p.poll() is not None for p in cluster.processes):
            break
        time.sleep(0.5)
    cluster.stop()
    raise RuntimeError(f"SLURM test cluster: no {what}\n{cluster.logs()}\n{(cluster.dir / 'daemons.out').read_text()}")
