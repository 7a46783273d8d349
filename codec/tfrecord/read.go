package tfrecord

import (
	"encoding/binary"
	"io"
	"sync"

	"github.com/recfs/recfs/codec"
)

// VerifyWhole is the record size up to which ReadRecord reads and checks a
// whole record on every call, whatever part of it was asked for.
const VerifyWhole = 64 << 10

var recPool = sync.Pool{New: func() any { b := make([]byte, VerifyWhole+Overhead); return &b }}

// ReadRecord reads bytes [off, off+len(p)) of rec's data into p, as
// io.ReaderAt does: n < len(p) only with an error, io.EOF when the read
// runs past the end of the record. Every call checks the record's length
// field and its checksum against rec (a mismatch is a *codec.CorruptError
// wrapping codec.ErrCorrupt). The data checksum is checked whenever the call
// reads the whole record, which it always does for records of up to
// VerifyWhole bytes (one ReadAt); reads of part of a larger record cost
// two ReadAts (header, then the bytes asked for) and check the framing only.
// It is safe for concurrent use.
func ReadRecord(r io.ReaderAt, rec Record, p []byte, off int64) (int, error) {
	want, ok, err := codec.ClipRead(p, off, rec.Len)
	if !ok {
		return 0, err
	}
	if rec.Len <= VerifyWhole || (off == 0 && int64(len(want)) == rec.Len) {
		n, err := readWhole(r, rec, want, off)
		if err == nil {
			err = codec.ShortRead(n, len(p))
		}
		return n, err
	}
	var h [HeaderSize]byte
	if err := readFull(r, h[:], rec.Off); err != nil {
		return 0, err
	}
	if err := checkHeader(h[:], rec); err != nil {
		return 0, err
	}
	if err := readFull(r, want, rec.DataOff()+off); err != nil {
		return 0, err
	}
	return len(want), codec.ShortRead(len(want), len(p))
}

// readWhole reads all of rec with one ReadAt, checks both checksums, and
// copies bytes [off, off+len(want)) of its data into want.
func readWhole(r io.ReaderAt, rec Record, want []byte, off int64) (int, error) {
	var b []byte
	if rec.Len <= VerifyWhole {
		bp := recPool.Get().(*[]byte)
		defer recPool.Put(bp)
		b = (*bp)[:rec.Len+Overhead]
	} else {
		// The caller asked for all of a large record: read the data
		// straight into want, the framing around it separately.
		var h [HeaderSize]byte
		if err := readFull(r, h[:], rec.Off); err != nil {
			return 0, err
		}
		if err := checkHeader(h[:], rec); err != nil {
			return 0, err
		}
		if err := readFull(r, want, rec.DataOff()); err != nil {
			return 0, err
		}
		var f [FooterSize]byte
		if err := readFull(r, f[:], rec.DataOff()+rec.Len); err != nil {
			return 0, err
		}
		if binary.LittleEndian.Uint32(f[:]) != maskCRC(crc32c(want)) {
			return 0, corrupt(rec.Off, ReasonDataCRC, codec.ErrCorrupt)
		}
		return len(want), nil
	}
	if err := readFull(r, b, rec.Off); err != nil {
		return 0, err
	}
	if err := checkHeader(b, rec); err != nil {
		return 0, err
	}
	data := b[HeaderSize : HeaderSize+rec.Len]
	if binary.LittleEndian.Uint32(b[HeaderSize+rec.Len:]) != maskCRC(crc32c(data)) {
		return 0, corrupt(rec.Off, ReasonDataCRC, codec.ErrCorrupt)
	}
	return copy(want, data[off:]), nil
}

// checkHeader verifies that h is a valid header for rec.
func checkHeader(h []byte, rec Record) error {
	n, ok := ParseHeader(h)
	switch {
	case !ok:
		return corrupt(rec.Off, ReasonLengthCRC, codec.ErrCorrupt)
	case n != uint64(rec.Len):
		return corrupt(rec.Off, ReasonLength, codec.ErrCorrupt)
	}
	return nil
}

// readFull reads len(b) bytes at off; a short read is codec.ErrTruncated.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	return codec.ReadFullAt(r, b, off, codec.TFRecord, ReasonTruncated)
}

// RecordReader returns an io.Reader of rec's data that checks the data
// checksum as it goes: the read that reaches the end of the data returns a
// *codec.CorruptError instead of io.EOF when the checksum does not match.
func RecordReader(r io.ReaderAt, rec Record) io.Reader {
	return &recordReader{r: r, rec: rec}
}

type recordReader struct {
	r      io.ReaderAt
	rec    Record
	off    int64
	crc    uint32
	header bool
	err    error
}

func (rr *recordReader) Read(p []byte) (int, error) {
	if rr.err != nil {
		return 0, rr.err
	}
	if !rr.header {
		var h [HeaderSize]byte
		if rr.err = readFull(rr.r, h[:], rr.rec.Off); rr.err != nil {
			return 0, rr.err
		}
		if rr.err = checkHeader(h[:], rr.rec); rr.err != nil {
			return 0, rr.err
		}
		rr.header = true
	}
	if rr.off >= rr.rec.Len {
		var f [FooterSize]byte
		if rr.err = readFull(rr.r, f[:], rr.rec.DataOff()+rr.rec.Len); rr.err != nil {
			return 0, rr.err
		}
		if binary.LittleEndian.Uint32(f[:]) != maskCRC(rr.crc) {
			rr.err = corrupt(rr.rec.Off, ReasonDataCRC, codec.ErrCorrupt)
			return 0, rr.err
		}
		rr.err = io.EOF
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), rr.rec.Len-rr.off)]
	if err := readFull(rr.r, p, rr.rec.DataOff()+rr.off); err != nil {
		rr.err = err
		return 0, err
	}
	rr.crc = crc32cUpdate(rr.crc, p)
	rr.off += int64(len(p))
	return len(p), nil
}
