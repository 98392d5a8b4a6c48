#!/usr/bin/env bash
# Build the pad firmware for the Uno and the Nano with Debian's AVR toolchain and print
# its flash and RAM use; fail when it does not compile or does not fit the board.
#   firmware/build.sh            (needs: gcc-avr avr-libc arduino-core-avr arduino-mk)
set -euo pipefail
cd "$(dirname "$0")/slappad"
for tool in avr-gcc avr-size make; do
  command -v "$tool" >/dev/null || { echo "firmware: $tool not found (apt install gcc-avr avr-libc arduino-core-avr arduino-mk)"; exit 1; }
done
[ -f /usr/share/arduino/Arduino.mk ] || { echo "firmware: /usr/share/arduino/Arduino.mk not found (apt install arduino-mk arduino-core-avr)"; exit 1; }
# board, make arguments, flash limit (the bootloader's share taken off), RAM
mkdir -p ../build
boards=("uno||32256|2048" "nano|BOARD_SUB=atmega328|30720|2048")
for entry in "${boards[@]}"; do
  IFS='|' read -r board extra flash_max ram_max <<<"$entry"
  if ! make -s BOARD_TAG="$board" $extra >"../build/$board.log" 2>&1 </dev/null; then
    echo "firmware: $board: does not compile; the end of ../build/$board.log:"; tail -20 "../build/$board.log"; exit 1
  fi
  elf=$(ls ../build/"$board"/*.elf | head -1)
  read -r text data bss _ < <(avr-size "$elf" | awk 'NR == 2')
  flash=$((text + data)); ram=$((data + bss))
  echo "firmware: $board: flash $flash of $flash_max bytes, RAM $ram of $ram_max bytes ($elf)"
  if [ "$flash" -gt "$flash_max" ] || [ "$ram" -gt "$ram_max" ]; then
    echo "firmware: $board: does not fit"; exit 1
  fi
done
# The simulator harness (firmware/sim/pad_harness.c, libsimavr): the tests and
# benchmarks/bench_firmware.py run the Uno binary in it.
if [ -f /usr/include/simavr/sim_avr.h ]; then
  gcc -O2 -Wall -o ../build/pad_harness ../sim/pad_harness.c -I/usr/include/simavr -lsimavr -lutil
  echo "firmware: harness ../build/pad_harness (libsimavr)"
else
  echo "firmware: no harness: libsimavr-dev is not installed (apt install libsimavr-dev)"
fi
