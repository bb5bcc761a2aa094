/*
 * ehframe: a frame's rule from the module's .eh_frame.  See ehframe.h.
 *
 * The module's .eh_frame_hdr (PT_GNU_EH_FRAME, which _dl_find_object
 * hands back) holds a sorted table of (first address, FDE); the FDE and
 * its CIE hold the CFI program, which is run up to the address keeping
 * only the CFA, %rbp and the return address.  Every field is read
 * through byte pointers (memcpy): nothing here is aligned.
 */

#include "preload/ehframe.h"

#include <dlfcn.h>
#include <string.h>

/* DWARF register numbers on x86-64. */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

/* Pointer encodings (DW_EH_PE_*). */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_ABSPTR 0x00
#define PE_ULEB 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define HDR_TABLE_ENC (PE_DATAREL | PE_SDATA4)

#define STATE_STACK 8 /* DW_CFA_remember_state depth followed */

bool ehframe_available(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    return true;
#else
    return false;
#endif
}

/* ---- reading -------------------------------------------------------------------------- */

typedef struct cur_s {
    const uint8_t *p, *end;
    bool bad; /* read past the end, or an encoding not handled */
} cur_t;

static uint64_t rd_n(cur_t *c, size_t n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, c->p, n); /* little-endian */
    c->p += n;
    return v;
}

static uint64_t rd_uleb(cur_t *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !c->bad; shift += 7) {
        if (c->p >= c->end || shift > 63) {
            c->bad = true;
            break;
        }
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t rd_sleb(cur_t *c)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
        if (c->bad || c->p >= c->end || shift > 63) {
            c->bad = true;
            return 0;
        }
        b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~(uint64_t)0 << shift;
    return (int64_t)v;
}

/* A pointer in encoding enc; datarel relative to base.  With only_format,
 * the value as stored (an FDE's address range). */
static uint64_t rd_enc(cur_t *c, uint8_t enc, uint64_t base, bool only_format)
{
    uintptr_t at = (uintptr_t)c->p;
    uint64_t v;
    switch (enc & PE_FORMAT) {
    case PE_ABSPTR:
    case PE_UDATA8:
    case PE_SDATA8:
        v = rd_n(c, 8);
        break;
    case PE_UDATA4:
        v = rd_n(c, 4);
        break;
    case PE_SDATA4:
        v = (uint64_t)(int64_t)(int32_t)(uint32_t)rd_n(c, 4);
        break;
    case PE_UDATA2:
        v = rd_n(c, 2);
        break;
    case PE_SDATA2:
        v = (uint64_t)(int64_t)(int16_t)(uint16_t)rd_n(c, 2);
        break;
    case PE_ULEB:
        v = rd_uleb(c);
        break;
    case PE_SLEB:
        v = (uint64_t)rd_sleb(c);
        break;
    default:
        c->bad = true;
        return 0;
    }
    if (only_format)
        return v;
    switch (enc & PE_APPLY) {
    case 0:
        break;
    case PE_PCREL:
        v += at;
        break;
    case PE_DATAREL:
        v += base;
        break;
    default:
        c->bad = true;
    }
    if (enc & PE_INDIRECT)
        c->bad = true; /* not in an FDE's addresses, in practice */
    return v;
}

/* ---- the CFI program ------------------------------------------------------------------- */

enum { HOW_SAME, HOW_OFFSET, HOW_UNDEF, HOW_OTHER };

typedef struct row_s {
    uint8_t cfa_reg;
    bool cfa_other; /* an expression */
    uint8_t rbp_how, ra_how;
    int64_t cfa_off, rbp_off, ra_off;
} row_t;

typedef struct cie_s {
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_reg;
    uint8_t fde_enc;
    bool has_aug_len; /* 'z' */
    const uint8_t *insns, *insns_end;
} cie_t;

typedef struct run_s {
    row_t row, init; /* init: the row after the CIE's instructions */
    row_t stack[STATE_STACK];
    unsigned depth;
    uint64_t loc;
    bool done, bad;
} run_t;

static void set_reg(run_t *r, uint64_t reg, uint8_t how, int64_t off, const cie_t *cie)
{
    if (reg == REG_RBP) {
        r->row.rbp_how = how;
        r->row.rbp_off = off;
    } else if (reg == cie->ra_reg) {
        r->row.ra_how = how;
        r->row.ra_off = off;
    } else if (reg == REG_RSP && how != HOW_SAME) {
        r->bad = true; /* %rsp restored from memory: not the simple shape */
    }
}

static void restore_reg(run_t *r, uint64_t reg, const cie_t *cie)
{
    if (reg == REG_RBP) {
        r->row.rbp_how = r->init.rbp_how;
        r->row.rbp_off = r->init.rbp_off;
    } else if (reg == cie->ra_reg) {
        r->row.ra_how = r->init.ra_how;
        r->row.ra_off = r->init.ra_off;
    }
}

static void advance(run_t *r, uint64_t delta, uint64_t pc)
{
    if (r->loc + delta > pc)
        r->done = true;
    else
        r->loc += delta;
}

/* The extended instructions that define the CFA (0x0c-0x0f, 0x12, 0x13). */
static void run_def_cfa(run_t *r, cur_t *c, uint8_t op, const cie_t *cie)
{
    switch (op) {
    case 0x0c: /* def_cfa */
        r->row.cfa_reg = (uint8_t)rd_uleb(c);
        r->row.cfa_off = (int64_t)rd_uleb(c);
        r->row.cfa_other = false;
        break;
    case 0x0d: /* def_cfa_register */
        r->row.cfa_reg = (uint8_t)rd_uleb(c);
        break;
    case 0x0e: /* def_cfa_offset */
        r->row.cfa_off = (int64_t)rd_uleb(c);
        break;
    case 0x0f: /* def_cfa_expression */
        c->p += rd_uleb(c);
        r->row.cfa_other = true;
        break;
    case 0x12: /* def_cfa_sf */
        r->row.cfa_reg = (uint8_t)rd_uleb(c);
        r->row.cfa_off = rd_sleb(c) * cie->data_align;
        r->row.cfa_other = false;
        break;
    case 0x13: /* def_cfa_offset_sf */
        r->row.cfa_off = rd_sleb(c) * cie->data_align;
        break;
    }
}

/* One instruction of the extended set (op's two high bits 0), its
 * operands read from c. */
static void run_extended(run_t *r, cur_t *c, uint8_t op, const cie_t *cie, uint64_t pc)
{
    uint64_t reg;
    switch (op) {
    case 0x00: /* nop */
        break;
    case 0x01: /* set_loc */
        r->bad = true; /* not emitted by compilers for .eh_frame */
        break;
    case 0x02:
        advance(r, rd_n(c, 1) * cie->code_align, pc);
        break;
    case 0x03:
        advance(r, rd_n(c, 2) * cie->code_align, pc);
        break;
    case 0x04:
        advance(r, rd_n(c, 4) * cie->code_align, pc);
        break;
    case 0x05: /* offset_extended */
        reg = rd_uleb(c);
        set_reg(r, reg, HOW_OFFSET, (int64_t)rd_uleb(c) * cie->data_align, cie);
        break;
    case 0x06: /* restore_extended */
        restore_reg(r, rd_uleb(c), cie);
        break;
    case 0x07: /* undefined */
        set_reg(r, rd_uleb(c), HOW_UNDEF, 0, cie);
        break;
    case 0x08: /* same_value */
        set_reg(r, rd_uleb(c), HOW_SAME, 0, cie);
        break;
    case 0x09: /* register */
        reg = rd_uleb(c);
        rd_uleb(c);
        set_reg(r, reg, HOW_OTHER, 0, cie);
        break;
    case 0x0a: /* remember_state */
        if (r->depth == STATE_STACK)
            r->bad = true;
        else
            r->stack[r->depth++] = r->row;
        break;
    case 0x0b: /* restore_state */
        if (r->depth == 0)
            r->bad = true;
        else
            r->row = r->stack[--r->depth];
        break;
    case 0x0c:
    case 0x0d:
    case 0x0e:
    case 0x0f:
        run_def_cfa(r, c, op, cie);
        break;
    case 0x10: /* expression */
    case 0x11: /* offset_extended_sf */
        reg = rd_uleb(c);
        set_reg(r, reg, HOW_OFFSET, rd_sleb(c) * cie->data_align, cie);
        break;
    case 0x12:
    case 0x13:
        run_def_cfa(r, c, op, cie);
        break;
    case 0x14: /* val_offset */
    case 0x15: /* val_offset_sf */
        reg = rd_uleb(c);
        rd_uleb(c);
        set_reg(r, reg, HOW_OTHER, 0, cie);
        break;
    case 0x2e: /* GNU_args_size */
        rd_uleb(c);
        break;
    case 0x2f: /* GNU_negative_offset_extended */
        reg = rd_uleb(c);
        set_reg(r, reg, HOW_OFFSET, -(int64_t)rd_uleb(c) * cie->data_align, cie);
        break;
    default:
        r->bad = true;
    }
}

/* Run the instructions in [p, end) until the row for pc is reached. */
static void run(run_t *r, const uint8_t *p, const uint8_t *end, const cie_t *cie, uint64_t pc)
{
    cur_t c = {p, end, false};
    while (!r->done && !r->bad && c.p < c.end) {
        uint8_t op = *c.p++;
        uint8_t low = op & 0x3f;
        switch (op & 0xc0) {
        case 0x40: /* advance_loc */
            advance(r, low * cie->code_align, pc);
            continue;
        case 0x80: /* offset */
            set_reg(r, low, HOW_OFFSET, (int64_t)rd_uleb(&c) * cie->data_align, cie);
            continue;
        case 0xc0: /* restore */
            restore_reg(r, low, cie);
            continue;
        }
        run_extended(r, &c, op, cie, pc);
        if (c.p > c.end)
            r->bad = true;
    }
    if (c.bad)
        r->bad = true;
}

/* ---- CIE, FDE -------------------------------------------------------------------------- */

/* The entry at p: its body in [*body, *end); false when malformed. */
static bool entry(const uint8_t *p, const uint8_t **body, const uint8_t **end)
{
    uint32_t len32;
    memcpy(&len32, p, 4);
    if (len32 == 0 || len32 == 0xffffffffu)
        return false; /* the terminator, or 64-bit DWARF (not in .eh_frame) */
    *body = p + 4;
    *end = p + 4 + len32;
    return true;
}

static bool parse_cie(const uint8_t *p, cie_t *cie)
{
    const uint8_t *body, *end;
    if (!entry(p, &body, &end))
        return false;
    cur_t c = {body, end, false};
    if (rd_n(&c, 4) != 0)
        return false; /* not a CIE */
    uint8_t version = (uint8_t)rd_n(&c, 1);
    if (version != 1 && version != 3 && version != 4)
        return false;
    const char *aug = (const char *)c.p;
    size_t auglen = strnlen(aug, (size_t)(c.end - c.p));
    if (auglen == (size_t)(c.end - c.p))
        return false;
    c.p += auglen + 1;
    if (version == 4)
        rd_n(&c, 2); /* address and segment selector sizes */
    cie->code_align = rd_uleb(&c);
    cie->data_align = rd_sleb(&c);
    cie->ra_reg = version == 1 ? rd_n(&c, 1) : rd_uleb(&c);
    cie->fde_enc = PE_ABSPTR;
    cie->has_aug_len = aug[0] == 'z';
    if (cie->has_aug_len) {
        uint64_t n = rd_uleb(&c);
        const uint8_t *aug_end = c.p + n;
        for (const char *a = aug + 1; *a && !c.bad; a++) {
            switch (*a) {
            case 'R':
                cie->fde_enc = (uint8_t)rd_n(&c, 1);
                break;
            case 'L':
                rd_n(&c, 1);
                break;
            case 'P': {
                uint8_t enc = (uint8_t)rd_n(&c, 1);
                rd_enc(&c, enc & ~PE_INDIRECT, 0, true);
                break;
            }
            default: /* 'S' (a signal frame) and anything unknown */
                return false;
            }
        }
        c.p = aug_end;
    } else if (aug[0]) {
        return false;
    }
    if (c.bad || c.p > end || cie->code_align == 0)
        return false;
    cie->insns = c.p;
    cie->insns_end = end;
    return true;
}

static ehframe_rule_t rule_of(const run_t *r, const cie_t *cie)
{
    ehframe_rule_t out = {.kind = EHFRAME_OTHER};
    const row_t *w = &r->row;
    if (r->bad)
        return out;
    if (w->ra_how == HOW_UNDEF) {
        out.last = true;
        out.kind = EHFRAME_RSP; /* nothing more is read */
        return out;
    }
    (void)cie;
    if (w->cfa_other || (w->cfa_reg != REG_RSP && w->cfa_reg != REG_RBP))
        return out;
    if (w->ra_how != HOW_OFFSET || w->ra_off != -8)
        return out;
    if (w->cfa_off < INT32_MIN || w->cfa_off > INT32_MAX)
        return out;
    if (w->rbp_how == HOW_OFFSET) {
        if (w->rbp_off == 0 || w->rbp_off < INT16_MIN || w->rbp_off > INT16_MAX)
            return out;
        out.rbp_off = (int16_t)w->rbp_off;
    } else if (w->rbp_how != HOW_SAME) {
        return out;
    }
    out.cfa_off = (int32_t)w->cfa_off;
    out.kind = w->cfa_reg == REG_RSP ? EHFRAME_RSP : EHFRAME_RBP;
    return out;
}

/* The FDE covering pc, from the sorted table of .eh_frame_hdr. */
static const uint8_t *find_fde(const uint8_t *hdr, uint64_t pc)
{
    if (hdr[0] != 1 || hdr[3] != HDR_TABLE_ENC)
        return NULL;
    cur_t c = {hdr + 4, hdr + 64, false};
    rd_enc(&c, hdr[1], (uintptr_t)hdr, false); /* eh_frame_ptr */
    if (hdr[2] == PE_OMIT)
        return NULL;
    uint64_t count = rd_enc(&c, hdr[2], (uintptr_t)hdr, false);
    if (c.bad || count == 0)
        return NULL;
    const uint8_t *table = c.p;
    int64_t rel = (int64_t)(pc - (uintptr_t)hdr);
    size_t lo = 0, hi = (size_t)count; /* the last entry whose start <= pc */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t start;
        memcpy(&start, table + mid * 8, 4);
        if (start <= rel)
            lo = mid;
        else
            hi = mid;
    }
    int32_t start, fde;
    memcpy(&start, table + lo * 8, 4);
    memcpy(&fde, table + lo * 8 + 4, 4);
    if (start > rel)
        return NULL;
    return hdr + fde;
}

/* x86-64 Linux's rt_sigreturn trampoline: mov $15, %rax; syscall. */
static const uint8_t sigreturn_code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

ehframe_rule_t ehframe_caller_rule(uintptr_t ra)
{
    ehframe_rule_t none = {.kind = EHFRAME_OTHER};
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    uint64_t pc = ra - 1;
    struct dl_find_object dlfo;
    if (_dl_find_object((void *)pc, &dlfo) != 0 || !dlfo.dlfo_eh_frame)
        return none;
    /* Code of a loaded module: readable up to its mapping's end. */
    if ((uintptr_t)dlfo.dlfo_map_end - ra >= sizeof sigreturn_code &&
        memcmp((const void *)ra, sigreturn_code, sizeof sigreturn_code) == 0)
        return none;
    const uint8_t *fde = find_fde(dlfo.dlfo_eh_frame, pc);
    const uint8_t *body, *end;
    if (!fde || !entry(fde, &body, &end))
        return none;
    int32_t cie_ptr;
    memcpy(&cie_ptr, body, 4);
    if (cie_ptr == 0)
        return none; /* a CIE, not an FDE */
    cie_t cie;
    if (!parse_cie(body - cie_ptr, &cie))
        return none;
    cur_t c = {body + 4, end, false};
    uint64_t begin = rd_enc(&c, cie.fde_enc, 0, false);
    uint64_t range = rd_enc(&c, cie.fde_enc, 0, true);
    if (cie.has_aug_len)
        c.p += rd_uleb(&c);
    if (c.bad || c.p > end || pc < begin || pc - begin >= range)
        return none;
    run_t r = {.row = {.cfa_reg = REG_RSP, .rbp_how = HOW_SAME, .ra_how = HOW_SAME}, .loc = begin};
    run(&r, cie.insns, cie.insns_end, &cie, pc);
    r.init = r.row;
    r.done = false;
    r.depth = 0;
    run(&r, c.p, end, &cie, pc);
    return rule_of(&r, &cie);
#else
    (void)ra;
    return none;
#endif
}
