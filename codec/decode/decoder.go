package decode

import (
	"bytes"
	"io"
	"time"

	"github.com/recfs/recfs/codec"
)

// Decoder renders records. Decode must depend only on rec (and, for a
// [Learner], on what earlier records taught it), must not keep
// rec.Payload, and may be called concurrently.
type Decoder interface {
	// Decode writes the view of rec to w. An error made with [Misfit]
	// says the record is not what the decoder reads.
	Decode(w *Writer, rec *Record) error
}

// Func adapts a function to a stateless [Decoder].
type Func func(w *Writer, rec *Record) error

// Decode calls f.
func (f Func) Decode(w *Writer, rec *Record) error { return f(w, rec) }

// Learner is a [Decoder] with state learned from the records before the
// one it renders (see the package documentation for the rules).
type Learner interface {
	Decoder
	// Learn feeds record rec to the state: records of a source come in
	// order from 0, each once, one call at a time. An error stops the
	// learning of this source; later records render with what was
	// learned before it.
	Learn(rec *Record) error
	// Reset forgets every record learned: the source was replaced.
	Reset()
}

// Summarizer is a [Learner] that renders its state: what the records
// amount to after the last one learned.
type Summarizer interface {
	Learner
	// Summary writes the state after the records learned so far.
	Summary(w *Writer) error
}

// Describer is a [Decoder] that says what it found out about its source
// (which file named its column families); .recfs shows it.
type Describer interface {
	Describe() string
}

// Record is one record handed to a decoder.
type Record struct {
	// N is the record's number in its source (its name in a mount).
	N int64
	// Payload holds the record's bytes; valid only during the call.
	Payload []byte
	// Meta is what the format keeps of the record beside its payload;
	// its zero value when the source has nothing to say.
	Meta Meta
}

// Meta is what a record format keeps beside a record's payload.
type Meta struct {
	// Seq is the format's number of the record (a Kafka offset), when
	// HasSeq.
	Seq    int64
	HasSeq bool
	// Time is the record's timestamp; the zero Time when it has none.
	Time time.Time
	// Key is the record's key (a Kafka key), when HasKey; a nil Key
	// with HasKey is a null key.
	Key    []byte
	HasKey bool
	// Headers are the record's key/value headers, in order.
	Headers []Header
	// Frame holds the bytes the format keeps around the payload, as it
	// keeps them (a Kafka record with its batch header), for a decoder of
	// that format that needs more than the fields above; nil when the
	// format gives none. Valid only during the call.
	Frame []byte
}

// Header is one key/value header of a record.
type Header struct {
	Key   string
	Value []byte
}

// Records is what a [Session] reads a source through. *index.Table and
// every fs.Records implement it.
type Records interface {
	// Len returns the number of records.
	Len() int64
	// Size returns the payload length of record n.
	Size(n int64) int64
	// ReadAt reads bytes of record n's payload with io.ReaderAt semantics.
	ReadAt(n int64, p []byte, off int64) (int, error)
}

// Slice is [Records] held in memory, one []byte a record: tests and
// callers that have the records already (a Beam IO's bundle) use it.
type Slice [][]byte

// Len returns the number of records.
func (s Slice) Len() int64 { return int64(len(s)) }

// Size returns the length of record n.
func (s Slice) Size(n int64) int64 { return int64(len(s[n])) }

// ReadAt reads bytes of record n with io.ReaderAt semantics.
func (s Slice) ReadAt(n int64, p []byte, off int64) (int, error) {
	return bytes.NewReader(s[n]).ReadAt(p, off)
}

// MetaReader is a [Records] whose format keeps fields beside payloads.
type MetaReader interface {
	// RecordMeta fills m with record n's metadata.
	RecordMeta(n int64, m *Meta) error
}

// RecordsCloser is a [Records] to close after use: a sibling file
// opened through [Dir].
type RecordsCloser interface {
	Records
	io.Closer
}

// Dir gives a decoder the files beside its source: a WAL's MANIFEST
// (column family names), an OPTIONS file, a WAL's earlier segments.
// Names are plain file names in the source's directory; an
// implementation refuses any other (a slash, "..") and every path that
// would leave the directory.
type Dir interface {
	// Names lists the entries of the directory.
	Names() ([]string, error)
	// ReadFile reads the small regular file name, failing past max bytes.
	ReadFile(name string, max int64) ([]byte, error)
	// OpenRecords opens the record file name as records.
	OpenRecords(name string) (RecordsCloser, error)
}

// SubDirs is a [Dir] that also opens the directories in it: a Prometheus
// WAL's checkpoint.NNNNNNNN directory beside its segments.
type SubDirs interface {
	// Sub returns the directory name in this one. name is a plain name;
	// an implementation refuses any other, and a name that is not a
	// directory (a symbolic link is not followed).
	Sub(name string) (Dir, error)
}

// Env is what a decoder may know of the source it decodes.
type Env struct {
	// Path names the source (a path or an s3:// URL); "" when unknown.
	Path string
	// Format is the source's framing format (codec.Unknown: not said).
	Format codec.Format
	// Dir reads the files beside the source; nil when the caller offers
	// none (an S3 object, standard input).
	Dir Dir
	// Budget bounds the memory of a decoder's state, in bytes
	// (0: DefaultBudget).
	Budget int64
	// Shared returns the value kept under key for the sessions of one
	// mount or command, making it with make the first time: state that
	// spans several sources. nil: nothing is shared (each call makes).
	Shared func(key string, make func() any) any
}

// DefaultBudget is the state budget of a decoder when Env.Budget is 0.
const DefaultBudget = 64 << 20

// StateBudget returns e.Budget, or DefaultBudget when it is 0.
func (e Env) StateBudget() int64 {
	if e.Budget > 0 {
		return e.Budget
	}
	return DefaultBudget
}

// Share returns e.Shared(key, make), or make() when e shares nothing.
func (e Env) Share(key string, make func() any) any {
	if e.Shared == nil {
		return make()
	}
	return e.Shared(key, make)
}
