package leveldb

// RecordEnd returns the file offset just past the last chunk of rec, or
// -1 when rec's layout does not cover its payload.
func RecordEnd(rec Record) int64 {
	hdr := recHdr(rec)
	var got, end int64
	for i := 0; ; i++ {
		c, ok := ChunkAt(rec, i)
		if !ok || c.Len < 0 {
			return -1
		}
		got += int64(c.Len)
		end = c.Off + hdr + int64(c.Len)
		if got >= rec.Len {
			return end
		}
	}
}

// RecordIn returns the payload of rec from buf, the bytes of the source
// at file offset base, checking every chunk's header and checksum as
// ReadRecord does. The payload of a record of one chunk is a part of buf;
// a longer one is copied into dst (grown as needed). ok is false when a
// chunk of rec lies outside buf or fails its check: ReadRecord of the
// source then says what is wrong. For reading many records through one
// large read.
func RecordIn(buf []byte, base int64, rec Record, dst []byte, o Options) (payload []byte, ok bool) {
	hdr := recHdr(rec)
	dst = dst[:0]
	var got int64
	for i := 0; ; i++ {
		c, ok := ChunkAt(rec, i)
		if !ok || c.Len < 0 || hdr+int64(c.Len) > logBlockSize {
			return nil, false
		}
		lo := c.Off - base
		hi := lo + hdr + int64(c.Len)
		if lo < 0 || hi > int64(len(buf)) {
			return nil, false
		}
		b := buf[lo:hi]
		if logCheckChunk(b, int(hdr), rec, i, o.Unmasked) != nil {
			return nil, false
		}
		got += int64(c.Len)
		if i == 0 && got >= rec.Len {
			return b[hdr : hdr+rec.Len], true
		}
		dst = append(dst, b[hdr:]...)
		if got >= rec.Len {
			return dst[:rec.Len], true
		}
	}
}

// Payload returns the payload of the record the last Next found, taken
// out of the bytes the scan read it from: its chunks' checksums were
// verified by the scan, so nothing is read or checked again. ok is false
// when a chunk of it is no longer among those bytes (a record spanning
// two of the scanner's reads); ReadRecord reads it then. The payload of a
// record of one chunk is a part of the scanner's buffer, valid until the
// next call of Next; a longer one is copied into dst (grown as needed).
func (s *Scanner) Payload(dst []byte) (payload []byte, ok bool) {
	rec := s.cur
	hdr := recHdr(rec)
	dst = dst[:0]
	var got int64
	for i := 0; i == 0 || got < rec.Len; i++ {
		c, ok := ChunkAt(rec, i)
		if !ok || c.Len < 0 {
			return nil, false
		}
		lo := c.Off + hdr - s.winOff
		hi := lo + int64(c.Len)
		if lo < hdr || hi > int64(len(s.win)) {
			return nil, false
		}
		if i == 0 && int64(c.Len) >= rec.Len {
			return s.win[lo : lo+rec.Len : lo+rec.Len], true
		}
		dst = append(dst, s.win[lo:hi]...)
		got += int64(c.Len)
	}
	return dst[:rec.Len], true
}
