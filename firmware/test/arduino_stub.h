/* Just enough of the Arduino API to compile slappad.ino on the host (syntax and types). */
#pragma once
#include <stdint.h>
#include <string.h>
enum { A0 = 14, A1, A2, A3 };
struct HostSerial {
    void begin(unsigned long) {}
    int available() { return 0; }
    int read() { return -1; }
    size_t write(const char *, size_t n) { return n; }
};
static HostSerial Serial;
static inline int analogRead(uint8_t) { return 0; }
static inline unsigned long micros() { return 0; }
