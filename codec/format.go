package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format names a record-file format.
type Format uint8

// The formats recfs reads. The zero value, Unknown, asks for detection.
const (
	Unknown        Format = iota
	LevelDB               // leveldb log: leveldb, goleveldb, App Engine records, RocksDB/pebble WALs
	RecordIO              // grailbio recordio, current (v2) format
	RecordIOLegacy        // grailbio recordio, legacy packed/unpacked format
)

var formatNames = [...]string{
	Unknown:        "unknown",
	LevelDB:        "leveldb",
	RecordIO:       "recordio",
	RecordIOLegacy: "recordio-legacy",
}

// String returns the format's short name, as ParseFormat accepts it.
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", uint8(f))
}

// ParseFormat parses a format name: "leveldb" (alias "log"), "recordio"
// (alias "rio") or "recordio-legacy".
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "leveldb", "log", "appengine", "rocksdb", "pebble":
		return LevelDB, nil
	case "recordio", "rio", "grailbio":
		return RecordIO, nil
	case "recordio-legacy", "legacy":
		return RecordIOLegacy, nil
	}
	return Unknown, fmt.Errorf("codec: unknown format %q (want leveldb, recordio or recordio-legacy)", s)
}

// Magic numbers of grailbio recordio (spec sections 2, 3.1 and 13).
var (
	rioHeaderMagic   = [8]byte{0xd9, 0xe1, 0xd9, 0x5c, 0xc2, 0x16, 0x04, 0xf7}
	rioBodyMagic     = [8]byte{0x2e, 0x76, 0x47, 0xeb, 0x34, 0x07, 0x3c, 0x2e} // also the legacy packed magic
	rioTrailerMagic  = [8]byte{0xfe, 0xba, 0x1a, 0xd7, 0xcb, 0xdf, 0x75, 0x3a}
	rioUnpackedMagic = [8]byte{0xfc, 0xae, 0x95, 0x31, 0xf0, 0xd9, 0xbd, 0x20}
)

// detectProbeBlocks is how many leveldb block starts Detect tries, so that a
// log whose first chunk is damaged is still recognised.
const detectProbeBlocks = 4

// Detect tells the format of a record file from its bytes. A file that is
// none of the formats, or is empty, yields an error matching [ErrFormat] that
// names what was tried.
func Detect(r io.ReaderAt, size int64) (Format, error) {
	if size == 0 {
		return Unknown, fmt.Errorf("%w: empty file", ErrFormat)
	}
	var head [20]byte
	n, err := r.ReadAt(head[:min(int64(len(head)), size)], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Unknown, err
	}
	h := head[:n]
	if len(h) >= 8 {
		var m [8]byte
		copy(m[:], h)
		switch m {
		case rioHeaderMagic:
			return RecordIO, nil
		case rioUnpackedMagic, rioBodyMagic:
			if len(h) >= 20 && crcIEEE(h[8:16]) == binary.LittleEndian.Uint32(h[16:20]) {
				return RecordIOLegacy, nil
			}
			if m == rioBodyMagic && len(h) >= 20 && binary.LittleEndian.Uint32(h[12:16]) == 0 &&
				binary.LittleEndian.Uint32(h[16:20]) <= rioMaxChunkPayload {
				return Unknown, fmt.Errorf("%w: starts with a recordio body chunk but has no header block (a headerless append tail?)", ErrFormat)
			}
		}
	}
	for b := int64(0); b < detectProbeBlocks && b*logBlockSize < size; b++ {
		if validLogChunkAt(r, size, b*logBlockSize) {
			return LevelDB, nil
		}
	}
	if rioBodyChunkAt(r, size, rioChunkSize) {
		// The header chunk is damaged past recognition, but the next chunk
		// starts a valid v2 body or trailer block: a recordio file whose
		// scanner recovers the body.
		return RecordIO, nil
	}
	return Unknown, fmt.Errorf("%w: tried leveldb log (no valid chunk at the first %d block starts), "+
		"grailbio recordio (first 8 bytes % x are not the header magic) and grailbio legacy recordio (no legacy record header)",
		ErrFormat, detectProbeBlocks, h[:min(8, len(h))])
}

// ByteSlicer is an io.ReaderAt that can also hand out its bytes without
// copying, as a memory-mapped file can. Scanners that are given one slice
// their windows from it instead of reading them into a buffer; they never
// write to the slices, which must stay valid while the scanner is used.
type ByteSlicer interface {
	io.ReaderAt
	// Slice returns the n bytes at off, read-only; fewer only with an error.
	Slice(off, n int64) ([]byte, error)
}

// Sizes shared by the formats.
const (
	logBlockSize       = 32768 // leveldb log block
	rioChunkSize       = 32768 // recordio chunk
	rioChunkHeader     = 28
	rioMaxChunkPayload = rioChunkSize - rioChunkHeader // 32740
)

// validLogChunkAt reports whether a well-formed leveldb chunk (legacy,
// recyclable or WAL-sync) with a correct masked CRC-32C starts at off.
func validLogChunkAt(r io.ReaderAt, size, off int64) bool {
	var hdr [19]byte
	avail := min(size-off, logBlockSize)
	if avail < 7 {
		return false
	}
	n, _ := r.ReadAt(hdr[:min(int64(len(hdr)), avail)], off)
	if n < 7 {
		return false
	}
	length := int64(binary.LittleEndian.Uint16(hdr[4:6]))
	typ := hdr[6]
	hs := int64(7)
	switch {
	case typ >= 1 && typ <= 4:
	case typ >= 5 && typ <= 8:
		hs = 11
	case typ >= 9 && typ <= 12:
		hs = 19
	default:
		return false
	}
	if int64(n) < hs || hs+length > avail {
		return false
	}
	buf := make([]byte, hs-6+length)
	if _, err := r.ReadAt(buf, off+6); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	if bytes.Count(hdr[:7], []byte{0}) == 7 {
		return false
	}
	return maskCRC(crc32c(buf)) == binary.LittleEndian.Uint32(hdr[0:4])
}

// rioBodyChunkAt reports whether a valid first chunk of a v2 body or trailer
// block starts at off.
func rioBodyChunkAt(r io.ReaderAt, size, off int64) bool {
	cr := rioChunkReader{r: r, size: size}
	h, _, f := cr.chunk(off)
	return f == nil && h.index == 0 && (h.magic == rioBodyMagic || h.magic == rioTrailerMagic)
}
