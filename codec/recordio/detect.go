package recordio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/recfs/recfs/codec"
)

// Magic numbers of grailbio recordio (spec sections 2, 3.1 and 13).
var (
	headerMagic   = [8]byte{0xd9, 0xe1, 0xd9, 0x5c, 0xc2, 0x16, 0x04, 0xf7}
	bodyMagic     = [8]byte{0x2e, 0x76, 0x47, 0xeb, 0x34, 0x07, 0x3c, 0x2e} // also the legacy packed magic
	trailerMagic  = [8]byte{0xfe, 0xba, 0x1a, 0xd7, 0xcb, 0xdf, 0x75, 0x3a}
	unpackedMagic = [8]byte{0xfc, 0xae, 0x95, 0x31, 0xf0, 0xd9, 0xbd, 0x20}
)

// Chunk sizes of recordio.
const (
	chunkSize       = 32768 // recordio chunk
	chunkHeader     = 28
	maxChunkPayload = chunkSize - chunkHeader // 32740
)

// ProbeHead tells a recordio file from its first bytes (up to 20): RecordIO
// for the v2 header magic, RecordIOLegacy for a legacy record header with a
// correct checksum, Unknown otherwise. A file that starts with a body chunk
// and no header is an error matching codec.ErrFormat.
func ProbeHead(h []byte) (codec.Format, error) {
	if len(h) < 8 {
		return codec.Unknown, nil
	}
	var m [8]byte
	copy(m[:], h)
	switch m {
	case headerMagic:
		return codec.RecordIO, nil
	case unpackedMagic, bodyMagic:
		if len(h) >= 20 && crcIEEE(h[8:16]) == binary.LittleEndian.Uint32(h[16:20]) {
			return codec.RecordIOLegacy, nil
		}
		if m == bodyMagic && len(h) >= 20 && binary.LittleEndian.Uint32(h[12:16]) == 0 &&
			binary.LittleEndian.Uint32(h[16:20]) <= maxChunkPayload {
			return codec.Unknown, fmt.Errorf("%w: starts with a recordio body chunk but has no header block (a headerless append tail?)", codec.ErrFormat)
		}
	}
	return codec.Unknown, nil
}

// ProbeBody reports whether the second chunk of r starts a valid v2 body or
// trailer block: a recordio file whose header chunk is damaged past
// recognition but whose scanner recovers the body.
func ProbeBody(r io.ReaderAt, size int64) bool {
	return bodyChunkAt(r, size, chunkSize)
}

// bodyChunkAt reports whether a valid first chunk of a v2 body or trailer
// block starts at off.
func bodyChunkAt(r io.ReaderAt, size, off int64) bool {
	cr := chunkReader{r: r, size: size}
	h, _, f := cr.chunk(off)
	return f == nil && h.index == 0 && (h.magic == bodyMagic || h.magic == trailerMagic)
}

// crcIEEE returns the CRC-32/IEEE of b, as grailbio recordio uses it.
func crcIEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// detect tells RecordIO from RecordIOLegacy for scanners and readers opened
// with codec.Unknown. Bytes of neither format are an error matching
// codec.ErrFormat.
func detect(r io.ReaderAt, size int64) (codec.Format, error) {
	var head [20]byte
	n, err := r.ReadAt(head[:min(int64(len(head)), size)], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return codec.Unknown, err
	}
	if f, err := ProbeHead(head[:n]); f != codec.Unknown || err != nil {
		return f, err
	}
	if ProbeBody(r, size) {
		return codec.RecordIO, nil
	}
	return codec.Unknown, fmt.Errorf("%w: not a grailbio recordio file (first 8 bytes % x are not the header magic)", codec.ErrFormat, head[:min(8, n)])
}
