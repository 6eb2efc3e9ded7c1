#!/usr/bin/env bash
# Verify the SLURM profile for real on one machine (not part of CI; needs root on Debian/Ubuntu).
#
# Installs Debian's slurm-wlm and munge, starts a single-node cluster (slurmctld + slurmd) with
# a "cpu" and a "gpu" partition and a fake GPU gres of the type the profile asks for, then runs
# a tiny transformers study's prompt selection, generation and scoring (all four scorers)
# through snakemake-executor-plugin-slurm with workflow/profiles/slurm. Every generate and score
# job must have been submitted to the gpu partition with a GPU; the script prints what sacct-less
# squeue/scontrol saw and the merged score tables.
#
#   sudo bash tests/slurm/run_slurm_check.sh [WORKDIR]     # default WORKDIR: a new temp dir
#
# Run from the repository root with the project's virtualenv active (python, snakemake and the
# tailgate package on PATH); the jobs run in that environment (exported by sbatch).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${1:-$(mktemp -d -t tailgate-slurm-XXXXXX)}"
HOST="$(hostname -s)"
# The node claims cluster-sized hardware (SlurmdParameters=config_overrides) so that the
# profile's requests (8 CPUs and 64 GB per generation job) are scheduled unchanged; the GPUs are
# a fake gres of the type the profile asks for (no device files), four so jobs run side by side.
CPUS=32
MEM_MB=300000
GPUS=4 # must match the gpu[0-3] files below
GPU_TYPE="a100"

say() { printf '\n== %s\n' "$*"; }

say "installing slurm-wlm and munge"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq slurm-wlm munge >/dev/null

say "configuring a single-node cluster on ${HOST} (claims ${CPUS} CPUs, ${MEM_MB} MB, ${GPUS} fake GPUs)"
mkdir -p /etc/munge /var/log/munge /run/munge /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
chown -R munge:munge /etc/munge /var/log/munge /run/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
munge -n | unmunge >/dev/null

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
# keep finished jobs visible to squeue: the plugin falls back to squeue without accounting
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
FAKE_DEV=/var/lib/tailgate-fake-gpu
mkdir -p "${FAKE_DEV}"
touch "${FAKE_DEV}"/gpu{0..3}
cat >/etc/slurm/gres.conf <<EOF
NodeName=${HOST} Name=gpu Type=${GPU_TYPE} File=${FAKE_DEV}/gpu[0-3]
EOF

# restart the daemons this script manages (by their pid files)
for d in slurmctld slurmd; do
  if [ -s "/run/${d}.pid" ] && kill -0 "$(cat "/run/${d}.pid")" 2>/dev/null; then
    kill "$(cat "/run/${d}.pid")"
    sleep 1
  fi
done
rm -rf /var/spool/slurmctld/* # a fresh controller state: this check's jobs only
/usr/sbin/slurmctld
/usr/sbin/slurmd
for _ in $(seq 30); do
  sinfo -h -o '%T' 2>/dev/null | grep -qxE 'idle|mixed' && break # not idle* (no response yet)
  sleep 1
done
scontrol update NodeName="${HOST}" State=RESUME 2>/dev/null || true
sinfo
scontrol show node "${HOST}" | grep -E 'Gres|CfgTRES'

say "a smoke job with a GPU request on the gpu partition"
srun -p gpu --gpus="${GPU_TYPE}:1" -t 1 bash -c 'echo "job $SLURM_JOB_ID on $(hostname) GPUs: ${SLURM_GPUS_ON_NODE:-?}"'

say "a frozen tiny transformers study in ${WORK}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=1
python "${REPO}/tests/llm/tiny_project.py" "${WORK}" --study tiny --prompts 8 --shards 1
sed -n '1,24p' "${WORK}/preregistrations/tiny.yaml"

say "generation and scoring through snakemake-executor-plugin-slurm"
TARGETS=()
for s in toxicity profanity nll length; do
  for c in clean noisy; do TARGETS+=("results/tiny/scores/${s}/${c}.parquet"); done
done
# The profile's own resources, unchanged; only the site settings this cluster lacks differ.
(
  cd "${WORK}"
  snakemake -s "${REPO}/Snakefile" -d "${WORK}" \
    --profile "${REPO}/workflow/profiles/slurm" --config study=tiny \
    --slurm-no-account --slurm-status-command squeue \
    --slurm-init-seconds-before-status-checks 5 --slurm-keep-successful-logs \
    --jobs 8 --latency-wait 5 \
    "${TARGETS[@]}"
)

say "what SLURM ran (squeue keeps finished jobs for MinJobAge)"
squeue -t all -o '%.8i %.10P %.28j %.10T %.12b %.6C %.8m %.10l' | tee "${WORK}/squeue.txt"
for id in $(squeue -h -t all -o '%i'); do
  scontrol show job "${id}" | tr ' ' '\n' | grep -E '^(JobId|Partition|TresPerJob|TRES|Comment|ExitCode)=' | paste -sd' '
done | tee "${WORK}/jobs.txt"
gpu_jobs=$(grep -E 'Comment=rule_(generate|score)_' "${WORK}/jobs.txt" | grep 'Partition=gpu' |
  grep -c 'TresPerJob=gres:gpu' || true)
typed_jobs=$(grep 'Comment=rule_generate_' "${WORK}/jobs.txt" | grep -c "gres:gpu:${GPU_TYPE}:1" || true)
cpu_jobs=$(grep -E 'Comment=rule_(select_prompts|merge_scores)' "${WORK}/jobs.txt" |
  grep 'Partition=cpu' | grep -vc 'gres:gpu' || true)
echo "generate/score jobs on the gpu partition holding a GPU: ${gpu_jobs}" \
  "(generate jobs holding a ${GPU_TYPE}: ${typed_jobs}); CPU-only jobs on cpu: ${cpu_jobs}"

say "merged score tables"
python - "${WORK}" <<'EOF'
import sys
from pathlib import Path

import pyarrow.parquet as pq

root = Path(sys.argv[1]) / "results" / "tiny" / "scores"
for path in sorted(root.glob("*/*.parquet")):
    t = pq.read_table(path).to_pandas()
    print(f"{path.relative_to(root)}: {len(t)} rows, score range "
          f"[{t.score.min():.4f}, {t.score.max():.4f}]")
EOF
# 2 conditions x 1 shard generation + 4 scorers x 2 conditions x 1 shard scoring
expected=$((2 + 4 * 2))
if [ "${gpu_jobs}" -ne "${expected}" ] || [ "${typed_jobs}" -ne 2 ] || [ "${cpu_jobs}" -ne 9 ]; then
  echo "FAILED: expected ${expected} GPU jobs (2 on ${GPU_TYPE}) and 9 CPU jobs" >&2
  exit 1
fi
echo "OK: ${expected} generation and scoring jobs ran on the gpu partition through the plugin"
