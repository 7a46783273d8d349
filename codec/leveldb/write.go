package leveldb

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/recfs/recfs/codec"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Offset is the current length of the destination when appending to an
	// existing log: writing continues at Offset%32768 inside the current
	// block, as leveldb C++'s Writer(dest, dest_length) does.
	Offset int64
	// AppEngine makes Close pad the final partial block with zeros to 32768
	// bytes, as App Engine's RecordsWriter does. A log that is empty or ends
	// on a block boundary is not padded.
	AppEngine bool
	// Recyclable writes RocksDB/pebble recyclable chunks (types 5-8, an
	// 11-byte header carrying LogNum) instead of legacy ones, laid out as
	// RocksDB's writer lays them out: a block tail too short for a header is
	// zero-filled when the next chunk is written (pebble's Writer fills
	// it right away; the bytes are the same once a chunk follows).
	Recyclable bool
	// WALSync writes pebble WAL-sync chunks (types 9-12, a 19-byte header
	// carrying LogNum and SyncedOffset). It takes precedence over
	// Recyclable.
	WALSync bool
	// LogNum is the log number recyclable and WAL-sync chunks carry: the low
	// 32 bits of the log file's number (Info.LogNum of an existing log).
	LogNum uint32
	// SyncedOffset is the offset WAL-sync chunks claim the log was durably
	// synced up to. pebble's reader takes a damaged chunk below it as proof
	// of corruption rather than a torn tail, so it must never exceed what
	// is known to be on disk; 0 claims nothing.
	SyncedOffset uint64
}

// HeaderSize returns the size of the chunk headers a Writer with these
// options writes: 7 (legacy), 11 (recyclable) or 19 (WAL-sync), the
// Record.Hdr of the records it writes.
func (o WriterOptions) HeaderSize() uint8 {
	hs, _ := o.hdr()
	return uint8(hs)
}

// hdr returns the chunk header size and the type of a FULL chunk of the
// flavour o selects.
func (o WriterOptions) hdr() (size int64, full byte) {
	switch {
	case o.WALSync:
		return logHdrWALSync, 9
	case o.Recyclable:
		return logHdrRecycle, 5
	}
	return logHdrLegacy, 1
}

// A Writer writes records in the leveldb log format, byte-identical to
// leveldb C++, goleveldb, pebble's record.Writer and App Engine's
// RecordsWriter, or in the recyclable and WAL-sync formats of RocksDB's and
// pebble's WAL writers (without pebble's end-of-log marker). It buffers internally; call Flush or Close. It is not safe
// for concurrent use.
type Writer struct {
	s   codec.Sink
	o   WriterOptions
	off int64               // log offset of the next byte, buffered bytes included
	hdr [logHdrWALSync]byte // putChunk's header scratch: a local one escapes through the CRC
}

// NewWriter returns a writer that appends records to w.
func NewWriter(w io.Writer, o WriterOptions) *Writer {
	return &Writer{s: codec.NewSink(w), o: o, off: max(o.Offset, 0)}
}

// logTypeCRC holds the CRC-32C of each legacy type byte, the starting value
// of each chunk's checksum.
var logTypeCRC = func() (t [5]uint32) {
	for i := range t {
		t[i] = codec.CRC32C([]byte{byte(i)})
	}
	return t
}()

// WriteRecord appends p as one record and returns the offset of its first
// chunk header.
func (w *Writer) WriteRecord(p []byte) (off int64, err error) {
	if err := w.s.Usable(); err != nil {
		return 0, err
	}
	first := true
	for {
		k := int(min(int64(len(p)), w.room()))
		last := k == len(p)
		if first {
			off = w.off
		}
		if err := w.putChunk(first, last, p[:k]); err != nil {
			return off, err
		}
		p = p[k:]
		first = false
		if last {
			return off, nil
		}
	}
}

// WriteRecordFrom appends size bytes read from r as one record, reading
// and writing it a fragment (at most a 32 KiB block) at a time, so the
// record is never held in memory; the bytes written are those WriteRecord
// writes. It returns the offset of its first chunk header. If r fails or
// ends early (ErrShortInput), fragments of the record may already be
// written: the caller must cut the destination back.
func (w *Writer) WriteRecordFrom(r io.Reader, size int64) (off int64, err error) {
	if err := w.s.Usable(); err != nil {
		return 0, err
	}
	if size < 0 {
		return 0, errors.New("codec: negative record size")
	}
	frag := make([]byte, logBlockSize)
	first := true
	left := size
	for {
		k := min(left, w.room())
		last := k == left
		if err := w.s.ReadFrag(r, frag[:k]); err != nil {
			return off, err
		}
		if first {
			off = w.off
		}
		if err := w.putChunk(first, last, frag[:k]); err != nil {
			return off, err
		}
		left -= k
		first = false
		if last {
			return off, nil
		}
	}
}

// room returns how many payload bytes the next chunk can carry in the
// current block, first zero-filling a block tail too short for a header.
func (w *Writer) room() int64 {
	hs, _ := w.o.hdr()
	room := logBlockSize - w.off%logBlockSize
	if room < hs {
		w.s.Buf = append(w.s.Buf, make([]byte, room)...)
		w.off += room
		room = logBlockSize
	}
	return room - hs
}

// putChunk buffers one chunk of a record carrying data, in w's flavour
// (first and last tell its position in the record), and flushes once
// enough is buffered. data must fit in the current block (see room).
func (w *Writer) putChunk(first, last bool, data []byte) error {
	hs, full := w.o.hdr()
	var kind int
	switch {
	case first && last:
		kind = logKindFull
	case first:
		kind = logKindFirst
	case last:
		kind = logKindLast
	default:
		kind = logKindMiddle
	}
	typ := full + byte(kind)
	h := &w.hdr
	h[6] = typ
	var crc uint32 // of the header bytes after the length: type [+ log number [+ synced offset]]
	if hs == logHdrLegacy {
		crc = logTypeCRC[typ]
	} else {
		binary.LittleEndian.PutUint32(h[7:], w.o.LogNum)
		binary.LittleEndian.PutUint64(h[11:], w.o.SyncedOffset)
		crc = codec.CRC32C(h[6:hs])
	}
	binary.LittleEndian.PutUint32(h[:], codec.MaskCRC(codec.CRC32CUpdate(crc, data)))
	binary.LittleEndian.PutUint16(h[4:], uint16(len(data)))
	w.s.Room(int(hs) + len(data))
	w.s.Buf = append(w.s.Buf, h[:hs]...)
	w.s.Buf = append(w.s.Buf, data...)
	w.off += hs + int64(len(data))
	return w.s.FlushIfFull()
}

// Offset returns the length of the log so far, including the starting
// Offset and bytes not yet flushed.
func (w *Writer) Offset() int64 { return w.off }

// Flush writes the buffered bytes to the destination.
func (w *Writer) Flush() error { return w.s.Flush() }

// Close flushes the log, first padding its last block with zeros when
// AppEngine is set. It does not close the destination. Closing twice is a
// no-op.
func (w *Writer) Close() error {
	if w.o.AppEngine && w.s.Usable() == nil {
		if r := w.off % logBlockSize; r != 0 {
			w.s.Buf = append(w.s.Buf, make([]byte, logBlockSize-r)...)
			w.off += logBlockSize - r
		}
	}
	return w.s.Close()
}
