package index

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"

	"github.com/recfs/recfs/codec"
)

// Saved tables. A cache file holds one table and the identity of the source
// it describes. It is written to a temporary file and renamed into place, so
// a reader sees a whole file or none, and ends with a CRC-32C of everything
// before it. Any mismatch (magic, version, identity, options, checksum,
// structure) makes loadCache fail and the caller rebuild: a cache file is
// never trusted into wrong bytes.

// cacheMagic and cacheVersion head every cache file; bump the version when
// the encoding or the meaning of a field changes.
const (
	cacheMagic   = "RECFSIDX"
	cacheVersion = 4 // 2: damage kinds of unknown chunk types and stale tails; 3: identity has ctime; 4: source path
)

var errBadCache = errors.New("index: unusable cache file")

// cachePath returns the cache file for the source at path, or "" when
// caching is disabled or no cache directory can be found.
func cachePath(dir, path string, id identity) string {
	if dir == "-" {
		return ""
	}
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(base, "recfs")
	}
	abs := absPath(path)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d", abs, id.dev, id.ino)
	return filepath.Join(dir, hex.EncodeToString(h.Sum(nil)[:16])+".idx")
}

// absPath returns path made absolute (path itself if that fails).
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// saveCache writes s to file atomically (see cache_file.go for how the
// directory and the file are made safe). A table too large for the bound
// loadCache applies is not saved.
func saveCache(file string, s *snapshot, o Options) error {
	b := encodeCache(s, o)
	if int64(len(b)) > cacheFileBound(s.id.size) {
		return errCacheTooLarge
	}
	saved, err := writeCacheFile(file, b)
	if err != nil {
		return err
	}
	s.cached = saved
	autoPrune(filepath.Dir(saved))
	return nil
}

// encodeCache returns the cache file contents for s made with options o.
func encodeCache(s *snapshot, o Options) []byte {
	var e encoder
	e.str(cacheMagic)
	e.u32(cacheVersion)
	e.identity(s.id)
	e.str(s.origin)
	e.options(o)
	e.snapshot(s)
	e.u32(crc32.Checksum(e.b, crc32.MakeTable(crc32.Castagnoli)))
	return e.b
}

// loadCache reads the table saved in file if it was made for source id with
// options o. The file must be ours and within the size bound; the table it
// holds is checked for consistency (checkTable) but not against the source
// bytes: the caller does that (verifySource) before serving from it.
func loadCache(file string, id identity, o Options) (*snapshot, error) {
	b, used, err := readCacheFile(file, cacheFileBound(id.size))
	if err != nil {
		return nil, err
	}
	if len(b) < len(cacheMagic)+8 {
		return nil, errBadCache
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)) != sum {
		return nil, errBadCache
	}
	d := decoder{b: body}
	if d.str() != cacheMagic || d.u32() != cacheVersion {
		return nil, errBadCache
	}
	if d.identity() != id {
		return nil, errBadCache
	}
	origin := d.str()
	var want encoder
	want.options(o)
	if got := d.bytes(len(want.b)); d.err != nil || string(got) != string(want.b) {
		return nil, errBadCache
	}
	s := d.snapshot()
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadCache
	}
	s.id, s.origin, s.cached = id, origin, used
	if err := s.checkTable(); err != nil {
		return nil, err
	}
	return s, nil
}

// encoder appends little-endian values to a byte slice.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }
func (e *encoder) i64(v int64)  { e.u64(uint64(v)) }
func (e *encoder) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *encoder) str(s string) { e.u32(uint32(len(s))); e.b = append(e.b, s...) }

func (e *encoder) identity(id identity) {
	e.u64(id.dev)
	e.u64(id.ino)
	e.i64(id.size)
	e.i64(id.mtime)
	e.i64(id.ctime)
	e.u32(id.head)
	e.u32(id.tail)
}

// options records every option that changes what a build produces.
func (e *encoder) options(o Options) {
	e.u8(uint8(o.Format))
	e.bool(o.Strict)
	e.bool(o.Unmasked)
	e.str(o.LegacyTransform)
}

func (e *encoder) snapshot(s *snapshot) {
	e.u8(uint8(s.format))
	e.str(s.flavor)
	e.i64(s.size)
	e.i64(s.n)
	e.i64(s.bytes)
	e.u32(uint32(len(s.damage)))
	for _, d := range s.damage {
		e.i64(d.Off)
		e.i64(d.Len)
		e.str(d.Reason)
		e.u8(damageKind(d.Err))
	}
	if s.format == codec.LevelDB {
		e.log(&s.log)
	} else {
		e.rio(&s.rio)
	}
}

func (e *encoder) log(t *logTable) {
	e.u8(t.hdr)
	e.bool(t.unmask)
	e.i64(t.resume)
	e.bool(t.info.Padded)
	e.bool(t.info.Recyclable)
	e.bool(t.info.WALSync)
	e.u32(t.info.LogNum)
	e.i64(t.info.EOFMarker)
	e.i64(t.info.End)
	for _, v := range t.off {
		e.i64(v)
	}
	for _, v := range t.ln {
		e.u32(v)
	}
	e.u32(uint32(len(t.side)))
	for k, v := range t.side {
		e.i64(k)
		e.i64(v.len)
		e.u8(v.hdr)
		e.u32(uint32(len(v.chunks)))
		for _, c := range v.chunks {
			e.i64(c.Off)
			e.u32(uint32(c.Len))
		}
	}
}

func (e *encoder) rio(t *rioTable) {
	e.u32(uint32(len(t.blocks)))
	for _, b := range t.blocks {
		e.i64(b.off)
		e.i64(b.first)
	}
	for _, v := range t.ioff {
		e.u32(v)
	}
	for _, v := range t.ilen {
		e.u32(v)
	}
	e.u32(uint32(len(t.big)))
	for k, v := range t.big {
		e.i64(k)
		e.i64(v)
	}
	e.u32(uint32(len(t.header)))
	for _, h := range t.header {
		e.str(h.Key)
		switch v := h.Value.(type) {
		case bool:
			e.u8(1)
			e.bool(v)
		case int64:
			e.u8(2)
			e.i64(v)
		case uint64:
			e.u8(3)
			e.u64(v)
		case string:
			e.u8(4)
			e.str(v)
		default:
			e.u8(4)
			e.str(fmt.Sprint(v))
		}
	}
	e.u32(uint32(len(t.transf)))
	for _, s := range t.transf {
		e.str(s)
	}
	e.bool(t.hasTrl)
	e.i64(t.trailer.Block)
	e.i64(int64(t.trailer.Item))
	e.i64(t.trailer.Off)
	e.i64(t.trailer.Len)
	e.str(t.legacyT)
}

// damageKinds maps damage classes to their cache encoding.
var damageKinds = []error{codec.ErrCorrupt, codec.ErrTruncated, codec.ErrUnsupported, codec.ErrLimit, codec.ErrStale}

func damageKind(err error) uint8 {
	for i, k := range damageKinds {
		if errors.Is(err, k) {
			return uint8(i)
		}
	}
	return 0
}

// decoder reads what encoder wrote; the first short read sets err and every
// later read returns zero values, so hostile cache files cannot panic it.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.err = errBadCache
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}
func (d *decoder) u8() uint8 {
	if b := d.bytes(1); b != nil {
		return b[0]
	}
	return 0
}
func (d *decoder) u32() uint32 {
	if b := d.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}
func (d *decoder) u64() uint64 {
	if b := d.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}
func (d *decoder) i64() int64  { return int64(d.u64()) }
func (d *decoder) bool() bool  { return d.u8() != 0 }
func (d *decoder) str() string { return string(d.bytes(int(d.u32()))) }

// count reads a length and checks that at least per bytes remain for each.
func (d *decoder) count(per int) int {
	n := d.u32()
	if d.err == nil && (per > 0 && uint64(n)*uint64(per) > uint64(len(d.b))) {
		d.err = errBadCache
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *decoder) identity() identity {
	return identity{dev: d.u64(), ino: d.u64(), size: d.i64(), mtime: d.i64(), ctime: d.i64(), head: d.u32(), tail: d.u32()}
}

func (d *decoder) snapshot() *snapshot {
	s := &snapshot{format: codec.Format(d.u8()), flavor: d.str(), size: d.i64(), n: d.i64(), bytes: d.i64()}
	nd := d.count(21)
	for range nd {
		dm := codec.Damage{Off: d.i64(), Len: d.i64(), Reason: d.str()}
		if k := int(d.u8()); k < len(damageKinds) {
			dm.Err = damageKinds[k]
		}
		s.damage = append(s.damage, dm)
	}
	if s.n < 0 || s.n > math.MaxInt32*4 || uint64(s.n)*4 > uint64(len(d.b)) {
		d.err = errBadCache
		return s
	}
	switch s.format {
	case codec.LevelDB:
		d.log(&s.log, s.n)
	case codec.RecordIO, codec.RecordIOLegacy:
		d.rio(&s.rio, s.n)
	default:
		d.err = errBadCache
	}
	return s
}

func (d *decoder) log(t *logTable, n int64) {
	t.hdr = d.u8()
	t.unmask = d.bool()
	t.resume = d.i64()
	t.info = codec.LogInfo{Padded: d.bool(), Recyclable: d.bool(), WALSync: d.bool(), LogNum: d.u32(),
		EOFMarker: d.i64(), End: d.i64()}
	if d.err != nil || uint64(n)*12 > uint64(len(d.b)) {
		d.err = errBadCache
		return
	}
	raw := d.bytes(int(n) * 8)
	t.off = make([]int64, n)
	for i := range t.off {
		t.off[i] = int64(binary.LittleEndian.Uint64(raw[i*8:]))
	}
	raw = d.bytes(int(n) * 4)
	t.ln = make([]uint32, n)
	for i := range t.ln {
		t.ln[i] = binary.LittleEndian.Uint32(raw[i*4:])
	}
	ns := d.count(21)
	t.side = make(map[int64]oddLog, ns)
	for range ns {
		k := d.i64()
		o := oddLog{len: d.i64(), hdr: d.u8()}
		nc := d.count(12)
		for range nc {
			o.chunks = append(o.chunks, codec.LogChunk{Off: d.i64(), Len: int32(d.u32())})
		}
		if k < 0 || k >= n || t.ln[k] != lenInSide {
			d.err = errBadCache
			return
		}
		t.side[k] = o
	}
	for i, l := range t.ln {
		if _, ok := t.side[int64(i)]; l == lenInSide && !ok {
			d.err = errBadCache
			return
		}
	}
}

func (d *decoder) rio(t *rioTable, n int64) {
	nb := d.count(16)
	t.blocks = make([]rioBlock, 0, nb)
	for range nb {
		b := rioBlock{off: d.i64(), first: d.i64()}
		if b.first < 0 || b.first > n || len(t.blocks) > 0 && b.first <= t.blocks[len(t.blocks)-1].first {
			d.err = errBadCache
			return
		}
		t.blocks = append(t.blocks, b)
	}
	if n > 0 && (nb == 0 || t.blocks[0].first != 0) {
		d.err = errBadCache
		return
	}
	if d.err != nil || uint64(n)*8 > uint64(len(d.b)) {
		d.err = errBadCache
		return
	}
	raw := d.bytes(int(n) * 4)
	t.ioff = make([]uint32, n)
	for i := range t.ioff {
		t.ioff[i] = binary.LittleEndian.Uint32(raw[i*4:])
	}
	raw = d.bytes(int(n) * 4)
	t.ilen = make([]uint32, n)
	for i := range t.ilen {
		t.ilen[i] = binary.LittleEndian.Uint32(raw[i*4:])
	}
	nbig := d.count(16)
	for range nbig {
		if t.big == nil {
			t.big = map[int64]int64{}
		}
		k, v := d.i64(), d.i64()
		if k < 0 || k >= n {
			d.err = errBadCache
			return
		}
		t.big[k] = v
	}
	for i, l := range t.ilen {
		if _, ok := t.big[int64(i)]; l == lenInSide && !ok {
			d.err = errBadCache
			return
		}
	}
	nh := d.count(6)
	for range nh {
		h := HeaderEntry{Key: d.str()}
		switch d.u8() {
		case 1:
			h.Value = d.bool()
		case 2:
			h.Value = d.i64()
		case 3:
			h.Value = d.u64()
		case 4:
			h.Value = d.str()
		default:
			d.err = errBadCache
			return
		}
		t.header = append(t.header, h)
	}
	nt := d.count(4)
	for range nt {
		t.transf = append(t.transf, d.str())
	}
	t.hasTrl = d.bool()
	t.trailer = codec.ItemLoc{Block: d.i64(), Item: int(d.i64()), Off: d.i64(), Len: d.i64()}
	t.legacyT = d.str()
}
