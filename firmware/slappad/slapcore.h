/* Slap detection core: plain C, no hardware calls, so it builds and is tested
 * on the host (tests/test_firmware.py) exactly as it runs on the pad.
 *
 * One sc_zone per force sensor. Feed every sample with its own micros() time;
 * sc_feed reports a slap once the peak scan window after an onset has closed.
 */
#ifndef SLAPCORE_H
#define SLAPCORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SC_PROTOCOL_VERSION 1

typedef struct {
    uint16_t min_rise;        /* detection threshold above the floor, ADC counts, at least */
    uint16_t timing_rise;     /* low threshold whose crossing times the onset, at least */
    uint16_t noise_mult_x16;  /* ... or this many noise units (x16), whichever is larger */
    uint16_t release_pct;     /* re-arm below floor + this % of the threshold rise (hysteresis) */
    uint32_t peak_window_us;  /* scan for the peak this long after the onset */
    uint32_t mask_us;         /* ignore new onsets this long after one (double triggers) */
    uint8_t  floor_shift;     /* floor tracks drift as an EMA with weight 1/2^shift */
} sc_config;

typedef struct {
    int32_t  floor_x256;      /* idle level, fixed point */
    int32_t  noise_x256;      /* mean absolute deviation while idle, fixed point */
    uint8_t  state;           /* SC_IDLE, SC_PEAK, SC_MASKED */
    uint8_t  primed;          /* seen at least one sample */
    uint16_t prev_value;
    uint32_t prev_t;
    uint32_t onset_t;         /* interpolated crossing of the low (timing) threshold */
    uint32_t low_t;           /* last upward crossing of the timing threshold */
    uint8_t  low_armed;       /* the signal is above the timing threshold since low_t */
    uint8_t  refine;          /* low_t waits for one more sample to be refined */
    uint8_t  onset_from_low;  /* onset_t is low_t (and follows its refinement) */
    uint32_t cross_t0;        /* the samples around the low crossing */
    uint32_t cross_t1;
    uint16_t cross_v1;
    uint32_t state_t;         /* when the current state began */
    uint16_t peak;
} sc_zone;

typedef struct {
    uint8_t  zone;
    uint32_t t_us;            /* onset time, micros() clock, wraps at 2^32 */
    uint16_t peak;            /* peak ADC value above the floor */
} sc_event;

enum { SC_IDLE = 0, SC_PEAK = 1, SC_MASKED = 2 };

void     sc_default_config(sc_config *cfg);
void     sc_zone_init(sc_zone *z);
/* Returns 1 and fills *out when a slap's peak window has just closed. */
int      sc_feed(sc_zone *z, const sc_config *cfg, uint8_t zone, uint32_t t_us, uint16_t value,
                 sc_event *out);
uint16_t sc_threshold(const sc_zone *z, const sc_config *cfg);
uint16_t sc_floor(const sc_zone *z);
uint16_t sc_noise(const sc_zone *z);

/* Protocol lines (see PROTOCOL.md): "BODY*CK\n", CK = XOR of BODY's bytes, two hex digits. */
uint8_t  sc_checksum(const char *body, size_t n);
int      sc_seal(char *buf, size_t cap, size_t body_len);   /* appends *CK\n, returns length */
int      sc_format_slap(char *buf, size_t cap, const sc_event *e, uint16_t seq);
int      sc_format_hello(char *buf, size_t cap, uint8_t zones, uint16_t rate_hz, uint16_t seq);
int      sc_format_heartbeat(char *buf, size_t cap, uint32_t t_us, uint16_t seq);
int      sc_format_cal(char *buf, size_t cap, uint8_t zone, const sc_zone *z, uint16_t seq);
int      sc_format_force(char *buf, size_t cap, const uint16_t *values, uint8_t zones,
                         uint16_t seq);

#ifdef __cplusplus
}
#endif
#endif
