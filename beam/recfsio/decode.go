package recfsio

import (
	"context"
	"fmt"
	"sync"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/recfs/recfs/codec/decode"
	"github.com/recfs/recfs/codec/decoders"
)

func init() {
	register.DoFn4x1[context.Context, *sdf.LockRTracker, string, func(string), error](&decodeFn{})
}

// DecodeOptions choose how Decode renders records, as `recfs cat
// --decode MODE [--json]` does.
type DecodeOptions struct {
	// Mode is a --decode mode: a decoder's name ("batch", "example",
	// "protobuf", "kafka", "prometheus", ...), NAME:ARG, or "auto".
	Mode string
	// JSON renders JSON Lines instead of text.
	JSON bool
}

// Decode reads the records of every file pattern matches, as Read does,
// and renders each through recfs's decoder of o.Mode: the PCollection
// holds one string per record, the lines `recfs cat --decode` prints for
// it. Decoders that learn from earlier records (a MANIFEST's live state)
// learn, in each range, from the file's records before the range.
func Decode(s beam.Scope, pattern string, o Options, d DecodeOptions) beam.PCollection {
	s = s.Scope("recfsio.Decode")
	return beam.ParDo(s, &decodeFn{base: base{Opt: o}, D: d}, matches(s, pattern, o))
}

// decodeFn is Decode's splittable DoFn.
type decodeFn struct {
	base
	D DecodeOptions
}

// sessions holds a worker's decoding sessions, one per file and options.
var sessions struct {
	sync.Mutex
	m map[sessionKey]*session
}

type sessionKey struct {
	path string
	d    DecodeOptions
}

// session is one file's decoding session; a session is used by one
// bundle at a time.
type session struct {
	sync.Mutex
	s   *decode.Session // nil: auto left the records raw
	err error
}

// session returns the decoding session of path's table.
func (fn *decodeFn) session(path string, f *file) *session {
	k := sessionKey{path, fn.D}
	sessions.Lock()
	defer sessions.Unlock()
	if ss := sessions.m[k]; ss != nil {
		return ss
	}
	ss := &session{}
	plan, err := decoders.Prepare(decoders.Spec{Mode: fn.D.Mode, Output: decode.Output{JSON: fn.D.JSON}})
	if err == nil {
		ss.s, _, err = plan.Open(f.t, decode.Env{Path: path, Format: f.t.Format()})
	}
	ss.err = err
	if sessions.m == nil {
		sessions.m = map[sessionKey]*session{}
	}
	sessions.m[k] = ss
	return ss
}

// ProcessElement emits the rendering of each record of the restriction.
func (fn *decodeFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, path string, emit func(string)) error {
	var ss *session
	return fn.process(ctx, rt, path, func(f *file, n int64, p []byte) error {
		if ss == nil {
			ss = fn.session(path, f)
			if ss.err != nil {
				return fmt.Errorf("%s: %w", path, ss.err)
			}
		}
		if ss.s == nil {
			emit(string(p))
			return nil
		}
		ss.Lock()
		out, err := ss.s.Render(nil, f.t, 0, n)
		ss.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		emit(string(out))
		return nil
	})
}
