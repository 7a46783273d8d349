package recordio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/recfs/recfs/codec"
)

// Legacy (v1) record framing (spec section 13).
const (
	legacyHeaderLen = 20      // magic, u64 length, CRC32 of the length
	legacyMaxRecord = 1 << 29 // the reference's "unreasonably large" bound
)

// legacyHdr is a parsed legacy record header.
type legacyHdr struct {
	packed bool
	length int64
}

// parseLegacyHdr checks a 20-byte legacy record header against the file
// size; the returned reason is empty when it is valid.
func parseLegacyHdr(b []byte, off, size int64) (legacyHdr, string) {
	var m [8]byte
	copy(m[:], b)
	var h legacyHdr
	switch m {
	case bodyMagic:
		h.packed = true
	case unpackedMagic:
	default:
		return h, fmt.Sprintf("invalid legacy magic % x", m)
	}
	if got, want := crcIEEE(b[8:16]), binary.LittleEndian.Uint32(b[16:20]); got != want {
		return h, fmt.Sprintf("corrupt record header, length crc %#x != stored %#x", got, want)
	}
	l := binary.LittleEndian.Uint64(b[8:16])
	if l > legacyMaxRecord {
		return h, fmt.Sprintf("unreasonably large record of %d bytes", l)
	}
	h.length = int64(l)
	return h, ""
}

// legacyPacked is a decoded packed-record payload header.
type legacyPacked struct {
	p       *packedHdr
	dataOff int64 // offset of the item data in the payload
}

// parseLegacyPacked checks the varint CRC and sizes of a packed payload.
// dataLen is the length of the (decoded) item data, or -1 to skip the
// size check (the caller checks after decoding).
func parseLegacyPacked(payload []byte, bound int64) (legacyPacked, error) {
	if len(payload) < 4 {
		return legacyPacked{}, fmt.Errorf("packed record of %d bytes has no header crc", len(payload))
	}
	p := &packedHdr{bound: bound}
	if err := p.feed(payload[4:]); err != nil {
		return legacyPacked{}, err
	}
	if p.state != 2 {
		return legacyPacked{}, fmt.Errorf("failed to read size of packed item %d", len(p.sizes))
	}
	if p.k > uint64(len(payload)) {
		return legacyPacked{}, fmt.Errorf("packed record claims %d items in %d bytes", p.k, len(payload))
	}
	if got, want := crcIEEE(payload[4:4+p.hdrLen]), binary.LittleEndian.Uint32(payload); got != want {
		return legacyPacked{}, fmt.Errorf("crc check failed - corrupt packed record header (%#x != %#x)", got, want)
	}
	if p.k == 0 {
		p.sizes = []int64{0} // the reference's K = 0 quirk: one empty item
	}
	return legacyPacked{p: p, dataOff: 4 + p.hdrLen}, nil
}

// nextLegacy loads the next legacy record, skipping damage.
func (s *Scanner) nextLegacy() {
	s.sizes = nil
	limit := s.opts.maxBlock()
	for !s.done {
		pos := s.pos
		if s.endsBefore(pos, legacyHeaderLen, "truncated legacy record header") {
			return
		}
		var hb [legacyHeaderLen]byte
		if _, err := readFullAt(s.r, hb[:], pos); err != nil {
			s.err, s.done = err, true
			return
		}
		h, reason := parseLegacyHdr(hb[:], pos, s.size)
		if reason != "" {
			next := s.resyncLegacy(pos + 1)
			s.addDamage(codec.Damage{Off: pos, Len: next - pos, Reason: reason, Err: codec.ErrCorrupt})
			s.pos = next
			continue
		}
		end := pos + legacyHeaderLen + h.length
		if end > s.size {
			s.addDamage(codec.Damage{Off: pos, Len: s.size - pos, Reason: "truncated legacy record", Err: codec.ErrTruncated})
			s.done = true
			return
		}
		if !h.packed {
			s.pos = end
			s.setBlock(Block{Off: pos, Items: 1, RawLen: h.length},
				&packedHdr{sizes: []int64{h.length}}, 0)
			return
		}
		if int64(cap(s.legacyBuf)) < h.length {
			s.legacyBuf = make([]byte, h.length)
		}
		payload := s.legacyBuf[:h.length]
		if n, err := readFullAt(s.r, payload, pos+legacyHeaderLen); err != nil || int64(n) < h.length {
			if err != nil {
				s.err, s.done = err, true
				return
			}
			s.addDamage(codec.Damage{Off: pos, Len: s.size - pos, Reason: "truncated legacy record", Err: codec.ErrTruncated})
			s.done = true
			return
		}
		b, p, dataOff, err := decodeLegacyPacked(payload, s.legacyFlate, limit)
		s.pos = end
		if err != nil {
			kind := codec.ErrCorrupt
			if errors.Is(err, codec.ErrLimit) {
				kind = codec.ErrLimit
			}
			s.addDamage(codec.Damage{Off: pos, Len: end - pos, Reason: err.Error(), Err: kind})
			continue
		}
		b.Off = pos
		s.setBlock(b, p, dataOff)
		return
	}
}

// decodeLegacyPacked parses a packed payload and checks that its items fit
// in the (decoded) data. dataOff is where item 0 starts in the coordinates
// ItemLoc.Off uses: the payload for plain records, the decoded data for
// flate records.
func decodeLegacyPacked(payload []byte, flate bool, limit int64) (Block, *packedHdr, int64, error) {
	bound := int64(len(payload))
	if flate {
		bound = limit
	}
	lp, err := parseLegacyPacked(payload, bound)
	if err != nil {
		return Block{}, nil, 0, err
	}
	dataLen := int64(len(payload)) - lp.dataOff
	dataOff := lp.dataOff
	if flate {
		// Inflated as a stream and discarded: only the length matters.
		dataLen, err = flateLen(payload[lp.dataOff:], limit)
		if err != nil {
			return Block{}, nil, 0, err
		}
		dataOff = 0
	}
	if lp.p.sum > dataLen {
		return Block{}, nil, 0, fmt.Errorf("packed items need %d bytes, record data has %d", lp.p.sum, dataLen)
	}
	return Block{Items: len(lp.p.sizes), RawLen: dataLen, Transformed: flate}, lp.p, dataOff, nil
}

// resyncLegacy returns the first offset at or after from holding a valid
// legacy record header whose record fits in the file, or the file size.
func (s *Scanner) resyncLegacy(from int64) int64 {
	const win = 64 << 10
	buf := make([]byte, win+legacyHeaderLen)
	for off := from; off < s.size; off += win {
		n, err := readFullAt(s.r, buf[:min(int64(len(buf)), s.size-off)], off)
		if err != nil {
			return s.size
		}
		w := buf[:n]
		// Next candidate position of each magic, recomputed only when used,
		// so a window costs linear time whatever it holds.
		next := func(m []byte, from int) int {
			if from >= len(w) {
				return -1
			}
			if j := bytes.Index(w[from:], m); j >= 0 {
				return from + j
			}
			return -1
		}
		c1, c2 := next(bodyMagic[:], 0), next(unpackedMagic[:], 0)
		for c1 >= 0 || c2 >= 0 {
			j := c1
			if j < 0 || (c2 >= 0 && c2 < j) {
				j = c2
			}
			if j >= win {
				break // found again by the next window
			}
			at := off + int64(j)
			var hb [legacyHeaderLen]byte
			if m, _ := readFullAt(s.r, hb[:], at); m == legacyHeaderLen {
				if h, reason := parseLegacyHdr(hb[:], at, s.size); reason == "" && at+legacyHeaderLen+h.length <= s.size {
					return at
				}
			}
			if j == c1 {
				c1 = next(bodyMagic[:], j+1)
			} else {
				c2 = next(unpackedMagic[:], j+1)
			}
		}
	}
	return s.size
}
