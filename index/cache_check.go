package index

import (
	"fmt"
	"io"

	"github.com/recfs/recfs/codec"
)

// A saved table passed its checksum and names the right source, but it is
// still only a claim about the source: checkTable makes sure it describes a
// possible table of a file of its size (every location inside the file,
// records in increasing file order, recordio items packed back to back),
// and verifySource reads the first and the last record through the
// checksum-verifying readers before anything is served from it.

// checkTable checks the structure of a decoded table against its size.
func (s *snapshot) checkTable() error {
	if s.size != s.id.size || s.n < 0 || s.bytes < 0 {
		return errBadCache
	}
	for _, d := range s.damage {
		if d.Off < 0 || d.Len < 0 || d.Off > s.size || d.Len > s.size-d.Off {
			return errBadCache
		}
	}
	var err error
	if s.format == codec.LevelDB {
		err = s.checkLog()
	} else {
		err = s.checkRIO()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errBadCache, err)
	}
	return nil
}

// validHdr reports whether h is a leveldb chunk header size.
func validHdr(h uint8) bool { return h == 7 || h == 11 || h == 19 }

// checkLog checks a leveldb table: each record's chunks lie inside the file
// after the end of the previous record.
func (s *snapshot) checkLog() error {
	t := &s.log
	if int64(len(t.off)) != s.n || int64(len(t.ln)) != s.n {
		return fmt.Errorf("%d records, %d offsets, %d lengths", s.n, len(t.off), len(t.ln))
	}
	if s.n > 0 && !validHdr(t.hdr) || t.resume < 0 || t.resume > s.size {
		return fmt.Errorf("header size %d, resume %d", t.hdr, t.resume)
	}
	var end, total int64 // end of the previous record, payload bytes
	for i := range s.n {
		rec := s.logRecord(i)
		if rec.Off < end || !validHdr(rec.Hdr) || rec.Len < 0 {
			return fmt.Errorf("record %d at %d (previous ends at %d)", i, rec.Off, end)
		}
		var got int64
		for k := 0; ; k++ {
			c, ok := codec.LogChunkAt(rec, k)
			if !ok {
				if k == 0 {
					return fmt.Errorf("record %d has no chunk", i)
				}
				break
			}
			if c.Off < end || c.Len < 0 || c.Off+int64(rec.Hdr)+int64(c.Len) > s.size {
				return fmt.Errorf("record %d chunk %d at %d outside the file", i, k, c.Off)
			}
			end = c.Off + int64(rec.Hdr) + int64(c.Len)
			got += int64(c.Len)
			if rec.Chunks == nil && got >= rec.Len {
				break
			}
		}
		if got != rec.Len {
			return fmt.Errorf("record %d: chunks hold %d of %d bytes", i, got, rec.Len)
		}
		total += rec.Len
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	return nil
}

// checkRIO checks a recordio table: blocks in increasing file order inside
// the file, and (v2) the items of a block packed back to back.
func (s *snapshot) checkRIO() error {
	t := &s.rio
	if int64(len(t.ioff)) != s.n || int64(len(t.ilen)) != s.n {
		return fmt.Errorf("%d items, %d offsets, %d lengths", s.n, len(t.ioff), len(t.ilen))
	}
	for b, blk := range t.blocks {
		if blk.off < 0 || blk.off >= s.size || b > 0 && blk.off <= t.blocks[b-1].off {
			return fmt.Errorf("block %d at %d", b, blk.off)
		}
	}
	var total int64
	for i := range s.n {
		l := s.size1(i)
		if l < 0 {
			return fmt.Errorf("item %d has length %d", i, l)
		}
		total += l
		b := t.blockOf(i)
		if b < 0 {
			return fmt.Errorf("item %d in no block", i)
		}
		if s.format == codec.RecordIO && t.blocks[b].first != i && int64(t.ioff[i]) != int64(t.ioff[i-1])+s.size1(i-1) {
			return fmt.Errorf("item %d at %d, not after item %d", i, t.ioff[i], i-1)
		}
	}
	if total != s.bytes {
		return fmt.Errorf("%d payload bytes, table says %d", total, s.bytes)
	}
	if t.hasTrl && (t.trailer.Block < 0 || t.trailer.Block >= s.size || t.trailer.Len < 0 || t.trailer.Off < 0) {
		return fmt.Errorf("trailer at %d", t.trailer.Block)
	}
	return nil
}

// verifySource reads a byte of the first and of the last record of s from
// src through the checksum-verifying readers (for recordio, decoding their
// blocks and checking the items' places in them).
func (t *Table) verifySource(s *snapshot) error {
	for _, n := range []int64{0, s.n - 1} {
		if n < 0 || n >= s.n || s.size1(n) == 0 {
			continue
		}
		var b [1]byte
		if _, err := t.readSnap(s, n, b[:], 0); err != nil && err != io.EOF {
			return fmt.Errorf("%w: %v", errBadCache, err)
		}
	}
	return nil
}
