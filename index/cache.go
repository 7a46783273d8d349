package index

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"io"
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
	cacheVersion = 12 // 2: damage kinds of unknown chunk types and stale tails; 3: identity has ctime; 4: source path; 5: codec.DamageKind, identity version; 6: local files keyed by their source.Identity; 7: checkpoints of compressed TFRecord streams; 8: seal (cache_vouch.go); 9: blob region (cache_blob.go), checkpoint windows in it; 10: a log's number from its name in the options; 11: that number claims before intact chunks (a table of 10 could hold a recycled WAL's previous life); 12: a legacy log's name claims nothing (a table of 11 could hold a named legacy log's torn tail as stale), nor one far above the chunks' numbers
)

var errBadCache = errors.New("index: unusable cache file")

// errStaleCache is loadCache's error for a sound cache file made for
// another version of the source, by another format version or with other
// options: expected, and replaced quietly.
var errStaleCache = errors.New("index: cache file of another version")

// cachePath returns the cache file for the table of a source whose
// source.Identity has key (a local file's cleaned absolute path), or ""
// when caching is disabled or no cache directory can be found. Versions of
// one key share the file: the identity saved in it (the Identity's version
// and, for a local file, its device, inode, size and times) tells them
// apart, and loadCache serves only the version it was saved for.
func cachePath(dir, key string) string {
	return cacheFileIn(dir, "source\x00"+key)
}

// cacheFileIn names the cache file of name (hashed) in the cache directory
// dir ("" = the user's, "-" = none).
func cacheFileIn(dir, name string) string {
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
	h := sha256.Sum256([]byte(name))
	return filepath.Join(dir, hex.EncodeToString(h[:16])+".idx")
}

// saveCache writes s to file atomically (see cache_file.go for how the
// directory and the file are made safe), encoding it straight into the
// file as it is written: a window of it in memory at a time, not a copy
// of the table, and no pipe or goroutine between the encoder and the
// file. A table too large for the bound loadCache applies is not saved;
// nor is one whose save ctx interrupts.
func saveCache(ctx context.Context, file string, s *snapshot, o Options) error {
	var key []byte
	if _, ok := s.tab.(voucher); ok {
		key = cacheKey(filepath.Dir(file), true) // only such a table has a use for a seal
	}
	saved, err := writeCacheFileWith(file, func(w io.Writer) error {
		return encodeCacheTo(ctxWriter{w: w, ctx: ctx}, s, o, cacheFileBound(s.id.size), key)
	})
	if err != nil {
		return err
	}
	s.cached = saved
	autoPrune(filepath.Dir(saved))
	return nil
}

// encodeCache returns the cache file contents for s made with options o,
// unsealed.
func encodeCache(s *snapshot, o Options) []byte {
	var b bytes.Buffer
	_ = encodeCacheTo(&b, s, o, math.MaxInt64, nil)
	return b.Bytes()
}

// encodeCacheTo writes the cache file contents for s made with options o
// to w, sealed with key unless it is nil (cache_vouch.go), or fails with
// errCacheTooLarge once they pass bound bytes.
func encodeCacheTo(w io.Writer, s *snapshot, o Options, bound int64, key []byte) error {
	e := encoder{b: make([]byte, 0, encodeBuf), w: w, bound: bound, mac: sealer(key)}
	e.str(cacheMagic)
	e.u32(cacheVersion)
	e.identity(s.id)
	e.str(s.origin)
	e.options(o)
	e.snapshot(s)
	e.flush()
	e.u32(e.crc)
	e.flush()
	var seal []byte
	if e.mac != nil {
		seal = e.mac.Sum(nil)
	}
	if e.err == nil {
		_, e.err = w.Write(seal)
	}
	e.writeBlob(w, len(seal))
	return e.err
}

// loadCache reads the table saved in file if it was made for source id with
// options o, or stops with ctx. The file must be ours and within the size bound; the table it
// holds is checked for consistency (checkTable) but not against the source
// bytes: the caller does that (verifySource) before serving from it.
func loadCache(ctx context.Context, file string, id identity, o Options) (*snapshot, error) {
	cf, size, used, err := openCacheFile(file, cacheFileBound(id.size))
	if err != nil {
		return nil, err
	}
	keep := false // the blob region reads cf later
	defer func() {
		if !keep {
			cf.Close()
		}
	}()
	l, err := readCacheLayout(cf, size)
	if err != nil {
		return nil, err
	}
	f := ctxStream{r: io.NewSectionReader(cf, 0, l.blobAt), ctx: ctx}
	// The file is decoded as it is read, so that loading a table takes
	// the table's memory and a window, not twice the table; its checksum
	// is checked at the end, before anything decoded is used.
	sums := cacheSums{crc: crc32.New(castagnoli)}
	if l.sealed {
		sums.mac = sealer(cacheKey(filepath.Dir(file), false))
	}
	d := streamDecoder(io.TeeReader(f, sums.writer()), l.body-4)
	d.blob = &cacheBlob{size: l.blobLen}
	origin, err := d.cacheHead(id, o)
	if err != nil {
		return nil, err
	}
	s := d.snapshot()
	if d.err != nil || d.remaining() != 0 || d.blob.used != l.blobLen {
		return nil, errBadCache
	}
	vouched, err := sums.check(f, l.sealed)
	if err != nil {
		return nil, err
	}
	var end [1]byte
	if n, _ := cf.ReadAt(end[:], l.blobAt+l.blobLen+cacheTrailer); n != 0 {
		return nil, errBadCache // grew since its stat
	}
	if err := canceled(ctx); err != nil {
		return nil, err
	}
	s.id, s.origin, s.cached = id, origin, used
	if err := s.checkTable(); err != nil {
		return nil, err
	}
	if v, ok := s.tab.(voucher); ok && vouched {
		v.vouch()
	}
	if l.blobLen > 0 {
		d.blob.attach(cf, l.blobAt, cf)
		keep = true
	}
	return s, nil
}

// cacheLayout is where the parts of a cache file stand: the body and its
// checksum from offset 0, then the seal (if sealed), the blob region and
// the trailer.
type cacheLayout struct {
	body    int64 // bytes of the body and its checksum
	blobAt  int64 // offset of the blob region
	blobLen int64 // bytes of the blob region
	sealed  bool  // a seal follows the checksum
}

// readCacheLayout reads the trailer at the end of cf, a cache file of size
// bytes, and checks that the parts it names fit; errBadCache if not.
func readCacheLayout(cf io.ReaderAt, size int64) (cacheLayout, error) {
	if size < int64(len(cacheMagic))+8+cacheTrailer {
		return cacheLayout{}, errBadCache
	}
	// The trailer gives the length of the blob region and of the seal
	// before it (0: unsealed); the body and its checksum come first.
	var tr [cacheTrailer]byte
	if _, err := cf.ReadAt(tr[:], size-cacheTrailer); err != nil || (tr[8] != 0 && tr[8] != sealSize) {
		return cacheLayout{}, errBadCache
	}
	l := cacheLayout{sealed: tr[8] == sealSize, blobLen: int64(binary.LittleEndian.Uint64(tr[:8]))}
	if l.blobLen < 0 || l.blobLen > size {
		return cacheLayout{}, errBadCache
	}
	l.blobAt = size - cacheTrailer - l.blobLen
	l.body = l.blobAt - int64(tr[8])
	if l.body < int64(len(cacheMagic))+8 {
		return cacheLayout{}, errBadCache
	}
	return l, nil
}

// cacheHead decodes the head of a cache body (magic, version, source
// identity, origin, options) and returns the origin: errBadCache if the head
// is not one, errStaleCache if it was made by another version, for another
// source or with other options than id and o.
func (d *decoder) cacheHead(id identity, o Options) (string, error) {
	if d.str() != cacheMagic {
		return "", errBadCache
	}
	if d.u32() != cacheVersion || d.err != nil {
		return "", errStaleCache
	}
	if got := d.identity(); d.err != nil {
		return "", errBadCache
	} else if got != id {
		return "", errStaleCache
	}
	origin := d.str()
	var want encoder
	want.options(o)
	if got := d.bytes(len(want.b)); d.err != nil {
		return "", errBadCache
	} else if string(got) != string(want.b) {
		return "", errStaleCache
	}
	return origin, nil
}

// cacheSums sums a cache body as it is decoded: its CRC-32C and, when the
// file is sealed and the folder has a key, its seal.
type cacheSums struct {
	crc hash.Hash32
	mac hash.Hash // nil: unsealed, or no key to check the seal with
}

// writer is where the body's bytes go to be summed.
func (c cacheSums) writer() io.Writer {
	if c.mac != nil {
		return io.MultiWriter(c.crc, c.mac)
	}
	return c.crc
}

// check reads the checksum (and the seal, if sealed) that follow the body
// in f and compares them with the sums: errBadCache if the checksum is
// wrong or either is cut short; vouched says whether the seal held.
func (c cacheSums) check(f io.Reader, sealed bool) (vouched bool, err error) {
	var sum [4 + sealSize]byte
	if _, err := io.ReadFull(f, sum[:4]); err != nil || c.crc.Sum32() != binary.LittleEndian.Uint32(sum[:4]) {
		return false, errBadCache
	}
	if !sealed {
		return false, nil
	}
	if _, err := io.ReadFull(f, sum[4:]); err != nil {
		return false, errBadCache
	}
	if c.mac == nil {
		return false, nil
	}
	c.mac.Write(sum[:4])
	return hmac.Equal(c.mac.Sum(nil), sum[4:]), nil
}

// encoder appends little-endian values to a byte slice; with w set, it
// writes the slice out (and sums it) whenever it holds streamWindow bytes.
type encoder struct {
	b     []byte
	w     io.Writer
	bound int64     // most bytes w may get
	n     int64     // bytes written to w
	crc   uint32    // CRC-32C of those bytes
	mac   hash.Hash // their seal, if sealed
	err   error

	blobs   []blobPiece // what goes in the blob region (cache_blob.go)
	blobLen int64
}

// encodeBuf is the room an encoder that streams starts with: a window and
// the most a column's chunk of 8-byte values adds before the spill that
// follows it, so that the buffer never grows by doubling and copying.
const encodeBuf = streamWindow + chunkLen*8

// spill writes the encoded bytes out once they fill a window.
func (e *encoder) spill() {
	if e.w != nil && len(e.b) >= streamWindow {
		e.flush()
	}
}

// flush writes the encoded bytes out.
func (e *encoder) flush() {
	if e.err == nil && e.n+int64(len(e.b)) > e.bound {
		e.err = errCacheTooLarge
	}
	if e.err == nil {
		e.crc = crc32.Update(e.crc, castagnoli, e.b)
		if e.mac != nil {
			e.mac.Write(e.b)
		}
		e.n += int64(len(e.b))
		_, e.err = e.w.Write(e.b)
	}
	e.b = e.b[:0]
}

// castagnoli is the CRC-32C table of cache files.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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

// locs writes every record's offset, then every record's length field.
func (e *encoder) locs(l *recLocs) {
	for i := range l.segs {
		l.segs[i].off.each(func(vs []int64) {
			for _, v := range vs {
				e.i64(v)
			}
			e.spill()
		})
	}
	for i := range l.segs {
		e.u32col(&l.segs[i].ln)
	}
}

// i64s writes vs.
func (e *encoder) i64s(vs []int64) {
	for _, v := range vs {
		e.i64(v)
	}
	e.spill()
}

// u32s writes vs.
func (e *encoder) u32s(vs []uint32) {
	for _, v := range vs {
		e.u32(v)
	}
	e.spill()
}

// u32col writes the values of c.
func (e *encoder) u32col(c *column[uint32]) {
	c.each(func(vs []uint32) {
		for _, v := range vs {
			e.u32(v)
		}
		e.spill()
	})
}

func (e *encoder) identity(id identity) {
	e.u64(id.dev)
	e.u64(id.ino)
	e.i64(id.size)
	e.i64(id.mtime)
	e.i64(id.ctime)
	e.u32(id.head)
	e.u32(id.tail)
	e.str(id.version)
}

// options records every option that changes what a build produces.
func (e *encoder) options(o Options) {
	e.u8(uint8(o.Format))
	e.bool(o.Strict)
	e.bool(o.Unmasked)
	e.str(o.LegacyTransform)
	e.u32(o.LogNum)
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
		e.u8(uint8(d.Kind))
		e.spill()
	}
	s.tab.encode(e)
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

// decoder reads what encoder wrote, from memory or from a stream; the
// first short read sets err and every later read returns zero values, so
// hostile cache files cannot panic it.
type decoder struct {
	b   []byte // the input in memory, or the window of a stream not yet decoded
	err error

	src  io.Reader // a stream's bytes after b
	left int64     // bytes of src not yet read
	win  []byte    // a stream's window storage

	blob *cacheBlob // the file's blob region (cache_blob.go)
}

// streamWindow is how much of a stream a decoder holds at once (more only
// for a single longer value).
const streamWindow = 1 << 20

// streamDecoder decodes the size bytes r holds.
func streamDecoder(r io.Reader, size int64) *decoder {
	return &decoder{src: r, left: size}
}

// remaining returns the number of bytes not yet decoded.
func (d *decoder) remaining() int64 { return int64(len(d.b)) + d.left }

// bytes returns the next n bytes. Of a stream they are valid only until
// the next read.
func (d *decoder) bytes(n int) []byte {
	if d.err != nil || n < 0 || int64(n) > d.remaining() {
		d.err = errBadCache
		return nil
	}
	if n > len(d.b) && !d.fill(n) {
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// fill reads from the stream until the window holds at least n bytes.
func (d *decoder) fill(n int) bool {
	size := max(n, streamWindow)
	if cap(d.win) < size {
		d.win = make([]byte, size)
	}
	d.win = d.win[:cap(d.win)]
	k := copy(d.win, d.b)
	want := min(int64(len(d.win)-k), d.left)
	got, err := io.ReadFull(d.src, d.win[k:k+int(want)])
	d.left -= int64(got)
	d.b = d.win[:k+got]
	if err != nil || len(d.b) < n {
		d.err = errBadCache
		return false
	}
	return true
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

// locs reads the locations of n records, as encoder.locs writes them, in
// one segment (empty, with d.err set, when the input is shorter).
func (d *decoder) locs(n int64) recLocs {
	off := decodeColumn(d, n, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	ln := d.u32col(n)
	if d.err != nil {
		return recLocs{}
	}
	return recLocs{segs: []locSeg{{off: off, ln: ln}}}
}

// u32col reads n little-endian uint32s, as encoder.u32col writes them.
func (d *decoder) u32col(n int64) column[uint32] {
	return decodeColumn(d, n, 4, binary.LittleEndian.Uint32)
}

// i64s reads n little-endian int64s, as encoder.i64s writes them (nil,
// with d.err set, when the input is shorter).
func (d *decoder) i64s(n int64) []int64 {
	return decodeArray(d, n, 8, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
}

// u32s reads n little-endian uint32s, as encoder.u32s writes them.
func (d *decoder) u32s(n int64) []uint32 {
	return decodeArray(d, n, 4, binary.LittleEndian.Uint32)
}

// decodeArray reads n values of size bytes each into a slice.
func decodeArray[T any](d *decoder, n int64, size int, get func([]byte) T) []T {
	var vs []T
	if decodeEach(d, n, size, func(b []byte) { vs = append(vs, get(b)) }, func() { vs = make([]T, 0, n) }) {
		return vs
	}
	return nil
}

// decodeColumn reads n values of size bytes each into a column.
func decodeColumn[T any](d *decoder, n int64, size int, get func([]byte) T) column[T] {
	var c column[T]
	if !decodeEach(d, n, size, func(b []byte) { c.add(get(b)) }, func() {}) {
		return column[T]{}
	}
	c.trim()
	return c
}

// decodeEach reads n values of size bytes each, a window at a time,
// handing each one's bytes to put (after start, once n is known to fit).
// It reports false, with d.err set, when the input is shorter.
func decodeEach(d *decoder, n int64, size int, put func([]byte), start func()) bool {
	if d.err != nil || n < 0 || n*int64(size) > d.remaining() {
		d.err = errBadCache
		return false
	}
	start()
	for left := n; left > 0; {
		k := min(left, int64(streamWindow/size))
		raw := d.bytes(int(k) * size)
		if raw == nil {
			return false // d.err is set
		}
		for j := range int(k) {
			put(raw[j*size:])
		}
		left -= k
	}
	return true
}

// sideComplete reports whether every record of l whose length field says
// lenInSide has its length elsewhere (has reports whether record k has).
func sideComplete(l *recLocs, has func(k int64) bool) bool {
	for k := range l.len() {
		if l.ln(k) == lenInSide && !has(k) {
			return false
		}
	}
	return true
}

// count reads a length and checks that at least per bytes remain for each.
func (d *decoder) count(per int) int {
	n := d.u32()
	if d.err == nil && (per > 0 && uint64(n)*uint64(per) > uint64(d.remaining())) {
		d.err = errBadCache
	}
	if d.err != nil {
		return 0
	}
	return int(n)
}

func (d *decoder) identity() identity {
	return identity{dev: d.u64(), ino: d.u64(), size: d.i64(), mtime: d.i64(), ctime: d.i64(), head: d.u32(), tail: d.u32(), version: d.str()}
}

func (d *decoder) snapshot() *snapshot {
	s := &snapshot{format: codec.Format(d.u8()), flavor: d.str(), size: d.i64(), n: d.i64(), bytes: d.i64()}
	nd := d.count(22)
	for range nd {
		dm := codec.Damage{Off: d.i64(), Len: d.i64(), Reason: d.str()}
		if k := int(d.u8()); k < len(damageKinds) {
			dm.Err = damageKinds[k]
		}
		dm.Kind = codec.DamageKind(d.u8())
		s.damage = append(s.damage, dm)
	}
	if s.n < 0 || s.n > math.MaxInt32*4 || uint64(s.n)*4 > uint64(d.remaining()) {
		d.err = errBadCache
		return s
	}
	drv, err := driverFor(s.format)
	if err != nil {
		d.err = errBadCache
		return s
	}
	s.tab = drv.decode(d, s.format, s.n)
	return s
}
