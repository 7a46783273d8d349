package decode

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// DefaultMaxRecord is the largest record a Session renders unless its
// options say otherwise.
const DefaultMaxRecord = 16 << 20

// MaxOutput bounds the rendering of a record of n bytes: a decoder whose
// text grows past it fails the record with ErrLimit.
func MaxOutput(n int) int { return 64*n + 1<<20 }

// SessionOptions configure a Session.
type SessionOptions struct {
	// Name names the decoder in messages ("batch").
	Name string
	// Output is how records are written.
	Output Output
	// MaxRecord bounds the records rendered or learned
	// (0: DefaultMaxRecord).
	MaxRecord int64
	// Why says how the decoder was chosen, for .recfs and info
	// ("asked for", "auto: the first 8 records are WriteBatches").
	Why string
}

// Session decodes the records of one source with one decoder: it reads
// each record within MaxRecord, feeds a [Learner] the records before the
// one rendered (lazily, once), and labels the lines as its Output says.
// It is safe for concurrent use.
type Session struct {
	o       SessionOptions
	dec     Decoder
	learner Learner
	summ    Summarizer

	mu      sync.Mutex // learning
	gen     uint64     // the generation learned
	learned int64      // records learned (0..learned-1)
	stopped bool       // Learn failed: learning of this generation is over
	buf     []byte     // learning's read buffer
}

// NewSession returns a session decoding with dec.
func NewSession(dec Decoder, o SessionOptions) *Session {
	if o.MaxRecord <= 0 {
		o.MaxRecord = DefaultMaxRecord
	}
	s := &Session{o: o, dec: dec}
	s.learner, _ = dec.(Learner)
	s.summ, _ = dec.(Summarizer)
	return s
}

// Name returns the decoder's name.
func (s *Session) Name() string { return s.o.Name }

// Why says how the decoder was chosen, and what it found out about its
// source when it is a [Describer].
func (s *Session) Why() string {
	if d, ok := s.dec.(Describer); ok {
		if more := d.Describe(); more != "" {
			if s.o.Why == "" {
				return more
			}
			return s.o.Why + "; " + more
		}
	}
	return s.o.Why
}

// Output returns the session's output mode.
func (s *Session) Output() Output { return s.o.Output }

// MaxRecord returns the largest record the session renders.
func (s *Session) MaxRecord() int64 { return s.o.MaxRecord }

// HasSummary reports whether the decoder renders a summary.
func (s *Session) HasSummary() bool { return s.summ != nil }

// scratch is what rendering one record needs besides its output: the
// record's bytes (kept for records up to 1 MiB), the record and the
// writer, pooled so that rendering allocates nothing per record.
type scratch struct {
	raw []byte
	rec Record
	w   Writer
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Render appends the view of record n of src to dst. gen is the source's
// generation (0 for a source that is never replaced): learned state of
// another generation is dropped first. On error, the returned text holds
// what the decoder wrote before the fault (cat shows it; a mount does
// not), and the error is an *Error.
func (s *Session) Render(dst []byte, src Records, gen uint64, n int64) ([]byte, error) {
	sc := scratchPool.Get().(*scratch)
	defer func() {
		sc.rec, sc.w = Record{}, Writer{}
		if cap(sc.raw) > 1<<20 {
			sc.raw = nil
		}
		scratchPool.Put(sc)
	}()
	raw, err := ReadRecord(src, n, sc.raw, s.o.MaxRecord)
	sc.raw = raw[:0]
	if err != nil {
		return dst, s.wrap(n, err)
	}
	return s.render(sc, dst, src, gen, n, raw)
}

// RenderPayload is Render of record n of src whose payload, raw, the
// caller has read already (at most MaxRecord bytes, or it fails with
// ErrTooLarge as Render does): for a pass that reads many records at once.
func (s *Session) RenderPayload(dst []byte, src Records, gen uint64, n int64, raw []byte) ([]byte, error) {
	if int64(len(raw)) > s.o.MaxRecord {
		return dst, s.wrap(n, &Error{At: -1, Reason: fmt.Sprintf("%d bytes (limit %d)", len(raw), s.o.MaxRecord), Err: ErrTooLarge})
	}
	sc := scratchPool.Get().(*scratch)
	defer func() {
		sc.rec, sc.w = Record{}, Writer{}
		scratchPool.Put(sc)
	}()
	return s.render(sc, dst, src, gen, n, raw)
}

// render appends the view of record n of src, whose payload is raw.
func (s *Session) render(sc *scratch, dst []byte, src Records, gen uint64, n int64, raw []byte) ([]byte, error) {
	rec := &sc.rec
	*rec = Record{N: n, Payload: raw}
	if err := readMeta(src, n, &rec.Meta); err != nil {
		return dst, s.wrap(n, err)
	}
	if s.learner != nil {
		s.learnTo(src, gen, n)
	}
	out, err := s.decode(&sc.w, dst, rec)
	if s.learner != nil {
		s.learnOne(gen, rec)
	}
	return out, err
}

// decode renders rec with w, checking the output bound.
func (s *Session) decode(w *Writer, dst []byte, rec *Record) ([]byte, error) {
	*w = Writer{B: dst, out: s.o.Output, n: rec.N}
	err := s.dec.Decode(w, rec)
	if len(w.B)-len(dst) > MaxOutput(len(rec.Payload)) {
		return dst, s.wrap(rec.N, &Error{At: -1, Reason: fmt.Sprintf("%d bytes of text for %d bytes of record", len(w.B)-len(dst), len(rec.Payload)), Err: ErrLimit})
	}
	if err != nil {
		return w.B, s.wrap(rec.N, err)
	}
	return w.B, nil
}

// Summary appends the decoder's summary of every record of src, learning
// those not learned yet; ok is false when the decoder has none.
func (s *Session) Summary(dst []byte, src Records, gen uint64) (out []byte, ok bool, err error) {
	if s.summ == nil {
		return dst, false, nil
	}
	s.learnTo(src, gen, src.Len())
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return dst, true, fmt.Errorf("decode %s: summary: %w", s.o.Name, errChangedDuring)
	}
	w := Writer{B: dst, out: s.o.Output, n: -1}
	if err := s.summ.Summary(&w); err != nil {
		return w.B, true, s.wrap(-1, err)
	}
	return w.B, true, nil
}

// errChangedDuring: the source was replaced while a summary was made.
var errChangedDuring = errors.New("the source changed while it was read")

// learnTo learns the records of src before n.
func (s *Session) learnTo(src Records, gen uint64, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetIfNew(gen)
	n = min(n, src.Len())
	for s.learned < n && !s.stopped {
		k := s.learned
		raw, err := ReadRecord(src, k, s.buf, s.o.MaxRecord)
		if cap(raw) <= 1<<20 {
			s.buf = raw[:0]
		}
		s.learned++
		if err != nil {
			continue // unreadable or too large: not learned, and fails on its own
		}
		rec := Record{N: k, Payload: raw}
		if readMeta(src, k, &rec.Meta) != nil {
			continue
		}
		if s.learner.Learn(&rec) != nil {
			s.stopped = true
		}
	}
}

// learnOne learns rec, just rendered, if it is the next to learn.
func (s *Session) learnOne(gen uint64, rec *Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen || s.learned != rec.N || s.stopped {
		return
	}
	s.learned++
	if s.learner.Learn(rec) != nil {
		s.stopped = true
	}
}

// resetIfNew drops what was learned of another generation; s.mu held.
func (s *Session) resetIfNew(gen uint64) {
	if gen == s.gen {
		return
	}
	s.gen, s.learned, s.stopped = gen, 0, false
	s.learner.Reset()
}

// wrap makes err an *Error naming the decoder and record.
func (s *Session) wrap(n int64, err error) error {
	var e *Error
	if errors.As(err, &e) && e.Decoder == "" {
		c := *e
		c.Decoder, c.N = s.o.Name, n
		return &c
	}
	if e != nil {
		return err
	}
	return &Error{Decoder: s.o.Name, N: n, At: -1, Err: err}
}

// readMeta fills m from src when its format keeps metadata.
func readMeta(src Records, n int64, m *Meta) error {
	if mr, ok := src.(MetaReader); ok {
		return mr.RecordMeta(n, m)
	}
	return nil
}

// ReadRecord reads record n of src into buf (grown as needed) and returns
// the payload; a record larger than max bytes fails with ErrTooLarge.
func ReadRecord(src Records, n int64, buf []byte, max int64) ([]byte, error) {
	if n < 0 || n >= src.Len() {
		return nil, fmt.Errorf("record %d of %d: %w", n, src.Len(), io.ErrUnexpectedEOF)
	}
	// A read of nothing first: a source whose sizes are claims until a
	// record is read (an index loaded from a saved one) proves record n.
	if _, err := src.ReadAt(n, nil, 0); err != nil && err != io.EOF {
		return nil, err
	}
	size := src.Size(n)
	if size < 0 {
		return nil, fmt.Errorf("record %d: %w", n, io.ErrUnexpectedEOF)
	}
	if size > max {
		return nil, &Error{At: -1, Reason: fmt.Sprintf("%d bytes (limit %d)", size, max), Err: ErrTooLarge}
	}
	if int64(cap(buf)) < size {
		buf = make([]byte, size)
	}
	raw := buf[:size]
	k, err := src.ReadAt(n, raw, 0)
	if int64(k) == size && err == io.EOF {
		err = nil
	}
	if err == nil && int64(k) < size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return raw[:0], err
	}
	return raw, nil
}
