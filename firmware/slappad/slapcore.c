/* Slap detection core; see slapcore.h. */
#include "slapcore.h"

#include <stdio.h>
#include <string.h>

void sc_default_config(sc_config *cfg) {
    cfg->min_rise = 60;          /* of 1023: well above FSR divider noise */
    cfg->timing_rise = 10;       /* the onset is timed low on the rising edge */
    cfg->noise_mult_x16 = 8 * 16;
    cfg->release_pct = 40;
    cfg->peak_window_us = 4000;  /* a slap peaks within a few ms of touching */
    cfg->mask_us = 120000;       /* one hand rebounding is one slap */
    cfg->floor_shift = 6;
}

void sc_zone_init(sc_zone *z) { memset(z, 0, sizeof *z); }

uint16_t sc_floor(const sc_zone *z) { return (uint16_t)(z->floor_x256 >> 8); }
uint16_t sc_noise(const sc_zone *z) { return (uint16_t)(z->noise_x256 >> 8); }

uint16_t sc_threshold(const sc_zone *z, const sc_config *cfg) {
    int32_t rise = (int32_t)((z->noise_x256 * cfg->noise_mult_x16) >> 12);  /* /256 /16 */
    if (rise < cfg->min_rise) rise = cfg->min_rise;
    return (uint16_t)(sc_floor(z) + rise);
}

/* Time of the threshold crossing between two samples, by linear interpolation:
 * at ~2.5 kHz a sample is 400 us apart, the crossing is placed far finer. */
static uint32_t crossing(uint32_t t0, uint16_t v0, uint32_t t1, uint16_t v1, uint16_t thr) {
    if (v1 <= v0 || thr <= v0) return t1;
    uint32_t dt = t1 - t0;                                   /* wraps correctly */
    uint32_t frac = ((uint32_t)(thr - v0) << 16) / (uint32_t)(v1 - v0);
    if (frac > 65536u) frac = 65536u;
    return t0 + (uint32_t)(((uint64_t)dt * frac) >> 16);
}

int sc_feed(sc_zone *z, const sc_config *cfg, uint8_t zone, uint32_t t, uint16_t v,
            sc_event *out) {
    int emitted = 0;
    if (!z->primed) {
        z->floor_x256 = (int32_t)v << 8;
        z->noise_x256 = 2 << 8;
        z->prev_value = v;
        z->prev_t = t;
        z->primed = 1;
        return 0;
    }
    uint16_t thr = sc_threshold(z, cfg);
    if (z->refine) {
        /* The force left the floor somewhere between cross_t0 and cross_t1. A straight
         * line through the first two samples above it, run back to the floor, says where
         * (interpolating across the kink would always answer "early"). */
        z->refine = 0;
        uint16_t fl = sc_floor(z);
        if (v > z->cross_v1 && z->cross_v1 > fl) {
            uint64_t back = ((uint64_t)(z->cross_v1 - fl) * (uint32_t)(t - z->cross_t1)) /
                            (uint32_t)(v - z->cross_v1);
            uint32_t span = z->cross_t1 - z->cross_t0;
            if (back > span) back = span;
            z->low_t = z->cross_t1 - (uint32_t)back;
            if (z->onset_from_low && z->state == SC_PEAK) z->onset_t = z->low_t;
        }
    }
    switch (z->state) {
    case SC_IDLE: {
        /* Time the onset where the force leaves the floor, not where it is high
         * enough to count: the low crossing hardly depends on how hard or how
         * fast a hand lands, so two hands are ordered by when they touched. */
        int32_t low_rise = (int32_t)((z->noise_x256 * 4) >> 8);
        if (low_rise < cfg->timing_rise) low_rise = cfg->timing_rise;
        uint16_t low = (uint16_t)(sc_floor(z) + low_rise);
        if (low > thr) low = thr;
        if (v >= low && z->prev_value < low) {
            z->low_t = crossing(z->prev_t, z->prev_value, t, v, low);
            z->low_armed = 1;
            z->refine = 1;
            z->cross_t0 = z->prev_t;
            z->cross_t1 = t;
            z->cross_v1 = v;
        } else if (v < low) {
            z->low_armed = 0;
        }
        if (v >= thr) {
            z->onset_from_low = z->low_armed;
            z->onset_t = z->low_armed ? z->low_t : crossing(z->prev_t, z->prev_value, t, v, thr);
            z->state = SC_PEAK;
            z->state_t = z->onset_t;
            z->peak = v;
        } else {
            /* Track the idle level and its noise (only while idle: a press is not drift). */
            int32_t x = (int32_t)v << 8;
            int32_t dev = x - z->floor_x256;
            z->floor_x256 += dev >> cfg->floor_shift;
            if (dev < 0) dev = -dev;
            z->noise_x256 += (dev - z->noise_x256) >> cfg->floor_shift;
        }
        break;
    }
    case SC_PEAK:
        if (v > z->peak) z->peak = v;
        if ((uint32_t)(t - z->onset_t) >= cfg->peak_window_us) {
            out->zone = zone;
            out->t_us = z->onset_t;
            out->peak = (uint16_t)(z->peak - sc_floor(z));
            emitted = 1;
            z->state = SC_MASKED;
        }
        break;
    case SC_MASKED: {
        uint16_t release = (uint16_t)(sc_floor(z) +
                                      ((uint32_t)(thr - sc_floor(z)) * cfg->release_pct) / 100);
        /* Re-arm only after the mask time AND once the force fell back (hysteresis). */
        if ((uint32_t)(t - z->onset_t) >= cfg->mask_us && v < release) {
            z->state = SC_IDLE;
            z->low_armed = 0;
        }
        break;
    }
    }
    z->prev_value = v;
    z->prev_t = t;
    return emitted;
}

uint8_t sc_checksum(const char *body, size_t n) {
    uint8_t ck = 0;
    for (size_t i = 0; i < n; i++) ck ^= (uint8_t)body[i];
    return ck;
}

int sc_seal(char *buf, size_t cap, size_t n) {
    if (n + 5 > cap) return -1;
    uint8_t ck = sc_checksum(buf, n);
    static const char hex[] = "0123456789ABCDEF";
    buf[n] = '*';
    buf[n + 1] = hex[ck >> 4];
    buf[n + 2] = hex[ck & 15];
    buf[n + 3] = '\n';
    buf[n + 4] = 0;
    return (int)(n + 4);
}

static int seal_fmt(char *buf, size_t cap, int n) {
    if (n < 0 || (size_t)n >= cap) return -1;
    return sc_seal(buf, cap, (size_t)n);
}

int sc_format_slap(char *buf, size_t cap, const sc_event *e, uint16_t seq) {
    return seal_fmt(buf, cap, snprintf(buf, cap, "SLAP %u %lu %u %u", e->zone,
                                       (unsigned long)e->t_us, e->peak, seq));
}

int sc_format_hello(char *buf, size_t cap, uint8_t zones, uint16_t rate_hz, uint16_t seq) {
    return seal_fmt(buf, cap, snprintf(buf, cap, "HELLO slappad %d %u %u %u",
                                       SC_PROTOCOL_VERSION, zones, rate_hz, seq));
}

int sc_format_heartbeat(char *buf, size_t cap, uint32_t t_us, uint16_t seq) {
    return seal_fmt(buf, cap, snprintf(buf, cap, "HB %lu %u", (unsigned long)t_us, seq));
}

int sc_format_cal(char *buf, size_t cap, uint8_t zone, const sc_zone *z, uint16_t seq) {
    return seal_fmt(buf, cap, snprintf(buf, cap, "CAL %u %u %u %u", zone, sc_floor(z),
                                       sc_noise(z), seq));
}

int sc_format_force(char *buf, size_t cap, const uint16_t *values, uint8_t zones, uint16_t seq) {
    int n = snprintf(buf, cap, "F");
    for (uint8_t i = 0; i < zones && n > 0 && (size_t)n < cap; i++)
        n += snprintf(buf + n, cap - (size_t)n, " %u", values[i]);
    if (n > 0 && (size_t)n < cap) n += snprintf(buf + n, cap - (size_t)n, " %u", seq);
    return seal_fmt(buf, cap, n);
}
