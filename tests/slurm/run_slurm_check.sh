#!/usr/bin/env bash
# Verify the SLURM profile for real on one machine with a tiny transformers study (not part of
# CI, which runs a simulate study end to end: tests/slurm/test_cluster.py); needs root on Debian.
#
# Starts a single-node cluster with tests/slurm/cluster.sh (Debian's slurm-wlm and munge; a
# "cpu" and a "gpu" partition and a fake GPU gres of the type the profile asks for), then runs
# a tiny transformers study's prompt selection, generation and scoring (all four scorers)
# through snakemake-executor-plugin-slurm with workflow/profiles/slurm. Every generate and score
# job must have been submitted to the gpu partition with a GPU; the script prints what sacct-less
# squeue/scontrol saw and the score shards.
#
#   sudo bash tests/slurm/run_slurm_check.sh [WORKDIR]     # default WORKDIR: a new temp dir
#
# Run from the repository root with the project's virtualenv active (python, snakemake and the
# tailgate package on PATH); the jobs run in that environment (exported by sbatch).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="${1:-$(mktemp -d -t tailgate-slurm-XXXXXX)}"
HOST="$(hostname -s)"
GPU_TYPE="a100" # the fake gres of tests/slurm/cluster.sh, the model the profile asks for

say() { printf '\n== %s\n' "$*"; }

say "a single-node cluster (tests/slurm/cluster.sh)"
bash "${REPO}/tests/slurm/cluster.sh"
scontrol show node "${HOST}" | grep -E 'Gres|CfgTRES'

say "a smoke job with a GPU request on the gpu partition"
srun -p gpu --gpus="${GPU_TYPE}:1" -t 1 bash -c 'echo "job $SLURM_JOB_ID on $(hostname) GPUs: ${SLURM_GPUS_ON_NODE:-?}"'

say "a frozen tiny transformers study in ${WORK}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=1
python "${REPO}/tests/support/tiny_project.py" "${WORK}" --study tiny --prompts 8 --shards 1
# a confirmatory run needs its registration committed as it is on disk
git -C "${WORK}" init -q -b main
git -C "${WORK}" add preregistrations config
git -C "${WORK}" -c user.name=check -c user.email=check@example.org commit -q -m "Register the study"
sed -n '1,24p' "${WORK}/preregistrations/tiny.yaml"

say "generation and scoring through snakemake-executor-plugin-slurm"
TARGETS=()
for s in toxicity profanity nll length; do
  for c in clean noisy; do TARGETS+=("results/tiny/scores/${s}/${c}/shard-0.parquet"); done
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
cpu_jobs=$(grep -E 'Comment=rule_select_prompts' "${WORK}/jobs.txt" |
  grep 'Partition=cpu' | grep -vc 'gres:gpu' || true)
echo "generate/score jobs on the gpu partition holding a GPU: ${gpu_jobs}" \
  "(generate jobs holding a ${GPU_TYPE}: ${typed_jobs}); CPU-only jobs on cpu: ${cpu_jobs}"

say "score shards"
python - "${WORK}" <<'EOF'
import sys
from pathlib import Path

import pyarrow.parquet as pq

root = Path(sys.argv[1]) / "results" / "tiny" / "scores"
for path in sorted(root.glob("*/*/shard-*.parquet")):
    t = pq.read_table(path).to_pandas()
    print(f"{path.relative_to(root)}: {len(t)} rows, score range "
          f"[{t.score.min():.4f}, {t.score.max():.4f}]")
EOF
# 2 conditions x 1 shard generation + 4 scorers x 2 conditions x 1 shard scoring
expected=$((2 + 4 * 2))
if [ "${gpu_jobs}" -ne "${expected}" ] || [ "${typed_jobs}" -ne 2 ] || [ "${cpu_jobs}" -ne 1 ]; then
  echo "FAILED: expected ${expected} GPU jobs (2 on ${GPU_TYPE}) and 1 CPU job" >&2
  exit 1
fi
echo "OK: ${expected} generation and scoring jobs ran on the gpu partition through the plugin"
