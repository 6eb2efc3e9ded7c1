#!/usr/bin/env bash
# A single-node SLURM cluster on this machine, for the cluster tests (tests/slurm/test_cluster.py)
# and for trying workflow/profiles/slurm by hand. Needs root on Debian or Ubuntu.
#
#   sudo bash tests/slurm/cluster.sh          # install (if needed) and start; prints sinfo
#   sudo bash tests/slurm/cluster.sh stop     # stop the daemons this script started
#
# Installs Debian's slurm-wlm and munge where they are missing, then starts munged, slurmctld
# and slurmd with the partitions the profile names ("cpu", the default, and "gpu") and a fake
# GPU gres of the model the profile asks for. The node claims cluster-sized hardware
# (SlurmdParameters=config_overrides), so that the profile's requests (8 CPUs and 64 GB per
# generation job) are scheduled unchanged on a small machine; the GPUs are plain files.
#
# Accounting is off (no slurmdbd): finished jobs stay visible to squeue and `scontrol show job`
# for MinJobAge seconds, which is where the tests read what SLURM saw. Any failure (the packages
# cannot be installed, a daemon does not come up) ends the script with a message and exit 1.
set -euo pipefail

HOST="$(hostname -s)"
CPUS=32
MEM_MB=300000
GPUS=4 # must match the gpu[0-3] files below
GPU_TYPE="a100"
FAKE_DEV=/var/lib/tailgate-fake-gpu

say() { printf '== %s\n' "$*"; }
fail() {
  printf 'SLURM cluster: %s\n' "$*" >&2
  exit 1
}

stop_daemons() {
  local d pid
  for d in slurmd slurmctld; do
    pid="$(cat "/run/${d}.pid" 2>/dev/null || true)"
    if [ -n "${pid}" ] && kill -0 "${pid}" 2>/dev/null; then
      kill "${pid}"
      for _ in $(seq 20); do
        kill -0 "${pid}" 2>/dev/null || break
        sleep 0.5
      done
    fi
  done
}

if [ "${1:-start}" = "stop" ]; then
  stop_daemons
  say "slurmctld and slurmd stopped"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || fail "needs root (it installs packages and starts the SLURM daemons)"

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null ||
  ! command -v sbatch >/dev/null; then
  say "installing slurm-wlm and munge"
  export DEBIAN_FRONTEND=noninteractive
  command -v apt-get >/dev/null || fail "no apt-get: install slurm-wlm and munge by hand"
  apt-get update -qq || fail "apt-get update failed: the Debian package archive is unreachable"
  apt-get install -y -qq slurm-wlm munge >/dev/null ||
    fail "apt-get install slurm-wlm munge failed"
fi
command -v slurmctld >/dev/null || fail "slurmctld is not on PATH after the installation"
say "$(slurmctld -V) on ${HOST}: claims ${CPUS} CPUs, ${MEM_MB} MB, ${GPUS} fake ${GPU_TYPE} GPUs"

mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge /var/spool/slurmctld \
  /var/spool/slurmd /var/log/slurm /etc/slurm
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
pgrep -u munge -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged ||
  fail "munged did not start (see /var/log/munge/munged.log)"
munge -n | unmunge >/dev/null || fail "munge cannot encode and decode a credential"

cat >/etc/slurm/slurm.conf <<EOF
ClusterName=tailgate-check
SlurmctldHost=${HOST}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
ReturnToService=2
SlurmdParameters=config_overrides
# keep finished jobs visible to squeue and scontrol: there is no accounting database
MinJobAge=3600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
NodeName=${HOST} CPUs=${CPUS} RealMemory=${MEM_MB} Gres=gpu:${GPU_TYPE}:${GPUS} State=UNKNOWN
PartitionName=cpu Nodes=${HOST} Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=${HOST} MaxTime=INFINITE State=UP
EOF
# slurmd counts GPUs by their device files: plain files stand in for /dev/nvidia*
mkdir -p "${FAKE_DEV}"
touch "${FAKE_DEV}"/gpu{0..3}
cat >/etc/slurm/gres.conf <<EOF
NodeName=${HOST} Name=gpu Type=${GPU_TYPE} File=${FAKE_DEV}/gpu[0-3]
EOF

stop_daemons
rm -rf /var/spool/slurmctld/* # a fresh controller state: no jobs of an earlier cluster
/usr/sbin/slurmctld || fail "slurmctld did not start (see /var/log/slurm/slurmctld.log)"
/usr/sbin/slurmd || fail "slurmd did not start (see /var/log/slurm/slurmd.log)"
up=""
for _ in $(seq 60); do
  if sinfo -h -o '%T' 2>/dev/null | grep -qxE 'idle|mixed'; then # not idle* (no response yet)
    up=1
    break
  fi
  sleep 0.5
done
scontrol update NodeName="${HOST}" State=RESUME 2>/dev/null || true
[ -n "${up}" ] || sinfo -h -o '%T' | grep -qxE 'idle|mixed' ||
  fail "the node did not become idle: $(sinfo -h -o '%T %E' | paste -sd' ')"
sinfo -o '%P %a %D %T %c %m %G'
