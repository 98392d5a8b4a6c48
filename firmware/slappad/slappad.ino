// Slap pad firmware: force sensors under the centre pile, one zone per seat.
// The detection core (slapcore.c) is plain C and host-tested; this file only
// reads the ADC, keeps time and speaks the line protocol (PROTOCOL.md).
#include "slapcore.h"

#ifndef SLAPPAD_ZONES
#define SLAPPAD_ZONES 4
#endif
static const uint8_t PINS[SLAPPAD_ZONES] = {A0, A1, A2, A3};
static const uint32_t BAUD = 115200;
static const uint32_t HEARTBEAT_US = 500000UL;
static const uint32_t STREAM_US = 20000UL;     // force view for `companion pad-test`: 50 Hz

static sc_config cfg;
static sc_zone zones[SLAPPAD_ZONES];
static uint16_t last_value[SLAPPAD_ZONES];
static uint16_t seq = 0;
static uint32_t last_hb = 0, last_stream = 0, samples = 0, rate_t0 = 0;
static uint16_t rate_hz = 0;
static bool streaming = false;
static char line[96];
static char cmd[24];
static uint8_t cmd_len = 0;

static void send(int n) {
  if (n > 0) Serial.write(line, n);
}

static void hello() { send(sc_format_hello(line, sizeof line, SLAPPAD_ZONES, rate_hz, seq++)); }

static void handle_command() {
  cmd[cmd_len] = 0;
  if (!strcmp(cmd, "CAL")) {
    for (uint8_t i = 0; i < SLAPPAD_ZONES; i++) send(sc_format_cal(line, sizeof line, i, &zones[i], seq++));
  } else if (!strcmp(cmd, "STREAM 1")) {
    streaming = true;
  } else if (!strcmp(cmd, "STREAM 0")) {
    streaming = false;
  } else if (!strcmp(cmd, "HELLO")) {
    hello();
  }
  cmd_len = 0;
}

void setup() {
#if defined(__AVR__)
  ADCSRA = (ADCSRA & ~0x07) | 0x04;   // ADC clock /16 (1 MHz): ~16 us a conversion, ~14 kHz a zone
#endif
  Serial.begin(BAUD);
  sc_default_config(&cfg);
  for (uint8_t i = 0; i < SLAPPAD_ZONES; i++) sc_zone_init(&zones[i]);
  rate_t0 = micros();
  hello();
}

void loop() {
  for (uint8_t i = 0; i < SLAPPAD_ZONES; i++) {
    uint16_t v = analogRead(PINS[i]);
    uint32_t t = micros();               // each sample keeps its own time
    last_value[i] = v;
    sc_event e;
    if (sc_feed(&zones[i], &cfg, i, t, v, &e)) send(sc_format_slap(line, sizeof line, &e, seq++));
  }
  samples++;
  uint32_t now = micros();
  if (now - rate_t0 >= 1000000UL) {      // measured per-zone sample rate, reported in HELLO
    rate_hz = (uint16_t)samples;
    samples = 0;
    rate_t0 = now;
  }
  if (now - last_hb >= HEARTBEAT_US) {
    last_hb = now;
    send(sc_format_heartbeat(line, sizeof line, now, seq++));
  }
  if (streaming && now - last_stream >= STREAM_US) {
    last_stream = now;
    send(sc_format_force(line, sizeof line, last_value, SLAPPAD_ZONES, seq++));
  }
  while (Serial.available()) {
    char c = (char)Serial.read();
    if (c == '\n' || c == '\r') {
      if (cmd_len) handle_command();
    } else if (cmd_len < sizeof cmd - 1) {
      cmd[cmd_len++] = c;
    }
  }
}
