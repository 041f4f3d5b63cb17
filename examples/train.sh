#!/bin/sh
# A stand-in training job for the gpuex demo, in POSIX sh only, so it runs in
# the demo's busybox image and under any launcher. Usage: sh train.sh EPOCHS STEP_S
#
# - It resumes: after each epoch it writes the epoch to $GPUEX_CHECKPOINT
#   (which the agent sends to the server), and a lease that starts with a
#   checkpoint in place (an order with `on_interrupt: resume` whose node was
#   lost) goes on from there instead of from 0.
# - It leaves outputs: each epoch's loss in $GPUEX_OUTPUTS/loss.csv, and the
#   final weights in $GPUEX_OUTPUTS/model.txt, which the buyer downloads.
set -eu
epochs=${1:-100000}
step_s=${2:-2}
checkpoint=${GPUEX_CHECKPOINT:-.}/epoch
outputs=${GPUEX_OUTPUTS:-.}

epoch=0
if [ -s "$checkpoint" ]; then
    epoch=$(cat "$checkpoint")
    echo "resuming from epoch $epoch"
else
    echo "starting from epoch 0 on ${CUDA_VISIBLE_DEVICES:-no GPU}"
fi
[ -f "$outputs/loss.csv" ] || echo "epoch,loss" > "$outputs/loss.csv"
while [ "$epoch" -lt "$epochs" ]; do
    epoch=$((epoch + 1))
    # The loss falls as 1/epoch, in thousandths.
    loss=$(printf '%d.%03d' $((1000 / epoch / 1000)) $((1000 / epoch % 1000)))
    echo "epoch $epoch/$epochs loss=$loss"
    echo "$epoch,$loss" >> "$outputs/loss.csv"
    # Written whole, then renamed: a checkpoint sent mid-write is never torn.
    echo "$epoch" > "$checkpoint.tmp"
    mv "$checkpoint.tmp" "$checkpoint"
    sleep "$step_s"
done
echo "w=3.0 b=1.0 epochs=$epoch" > "$outputs/model.txt"
echo "training done"
