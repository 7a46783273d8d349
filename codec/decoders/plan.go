// Package decoders is the registry of record decoders: every decoder by
// name (registry.go, one line each), the parameters its flags give it,
// and the choice of a decoder for a source by --decode mode, by content
// (--decode auto) and by name. Front ends (cat, mount, serve) turn their
// flags into a [Spec], [Prepare] it once, and [Plan.Open] a session for
// each source; package codec/decode says how to write a decoder.
package decoders

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/decode"
)

// Modes of --decode besides the decoders' names.
const (
	ModeNone = ""     // records as they are
	ModeAuto = "auto" // a decoder chosen by content
)

// ErrUsage marks errors of the command line (an unknown mode, a missing
// --proto): cmd exits with its usage status.
var ErrUsage = errors.New("decoders: usage")

// Entry is one decoder of the registry.
type Entry struct {
	// Name is the --decode value ("batch").
	Name string
	// Arg names the argument of NAME:ARG when the decoder takes one
	// ("MESSAGE"); Required says it must be given.
	Arg      string
	Required bool
	// Help is the decoder's line in --help.
	Help string
	// Formats are the framings --decode auto tries the decoder on (nil:
	// every one); Detect says whether the first records of a source are
	// certainly this decoder's (nil: auto never picks it); NameHint
	// breaks a tie between detectors by the source's file name.
	Formats  []codec.Format
	Detect   func(recs [][]byte) bool
	NameHint func(base string) bool
	// ByFraming says auto picks the decoder for every source of one of
	// its Formats (said, not Unknown), whatever its records hold: the
	// framing is the decoder's (Kafka segments: --decode kafka).
	ByFraming bool
	// Prepare checks the decoder's parameters and returns the factory of
	// its per-source decoders; called once per command or mount.
	Prepare func(p *decode.Params) (decode.Factory, error)
}

// Spec is a --decode mode with what the command line gives it.
type Spec struct {
	// Mode is the --decode value: ModeNone, ModeAuto, NAME or NAME:ARG.
	Mode string
	// Params carry --proto, --proto-path, --manifest and file access;
	// Params.Arg is set from Mode.
	decode.Params
	// Output is how records are written (--json, --number).
	Output decode.Output
	// MaxRecord bounds the records decoded (0: decode.DefaultMaxRecord).
	MaxRecord int64
}

// Names returns the names of the decoders and "auto", for completion.
func Names() []string {
	out := make([]string, 0, len(registry)+1)
	for _, e := range registry {
		out = append(out, e.Name)
	}
	return append(out, ModeAuto)
}

// Help returns one line per decoder ("  NAME  help"), for --help.
func Help() string {
	var b strings.Builder
	for _, e := range registry {
		name := e.Name
		switch {
		case e.Arg != "" && e.Required:
			name += ":" + e.Arg
		case e.Arg != "":
			name += "[:" + e.Arg + "]"
		}
		fmt.Fprintf(&b, "  %-18s %s\n", name, e.Help)
	}
	fmt.Fprintf(&b, "  %-18s %s\n", ModeAuto, autoHelp)
	return b.String()
}

const autoHelp = "chosen by content: the first records' decoder when exactly one fits them (ties broken by file name), else raw (.recfs says why)"

// lookup returns the entry of mode NAME[:ARG] and the argument.
func lookup(mode string) (*Entry, string, error) {
	name, arg, hasArg := strings.Cut(mode, ":")
	for i := range registry {
		e := &registry[i]
		if e.Name != name {
			continue
		}
		switch {
		case hasArg && e.Arg == "":
			return nil, "", fmt.Errorf("%w: --decode %s takes no argument", ErrUsage, name)
		case e.Required && arg == "":
			return nil, "", fmt.Errorf("%w: --decode %s needs :%s", ErrUsage, name, e.Arg)
		}
		return e, arg, nil
	}
	return nil, "", fmt.Errorf("%w: --decode %q: want one of %s", ErrUsage, mode, strings.Join(Names(), ", "))
}

// Check checks a --decode value without preparing it.
func Check(mode string) error {
	if mode == ModeNone || mode == ModeAuto {
		return nil
	}
	_, _, err := lookup(mode)
	return err
}

// Plan is a prepared Spec: it opens the session of each source.
type Plan struct {
	spec    Spec
	entry   *Entry         // nil for auto
	factory decode.Factory // the entry's, once prepared

	mu     sync.Mutex
	autos  map[string]decode.Factory // auto: the factories prepared so far
	shared map[string]any            // what decoders share between sources (Env.Shared)
}

// share is the plan's Env.Shared: one value per key for every source the
// plan opens.
func (p *Plan) share(key string, make func() any) any {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.shared[key]; ok {
		return v
	}
	if p.shared == nil {
		p.shared = map[string]any{}
	}
	v := make()
	p.shared[key] = v
	return v
}

// Prepare checks spec and prepares its decoder (compiling schemas,
// reading --manifest); nil for ModeNone. Errors of the command line
// match ErrUsage.
func Prepare(spec Spec) (*Plan, error) {
	if spec.Mode == ModeNone {
		return nil, nil
	}
	p := &Plan{spec: spec}
	if spec.Mode == ModeAuto {
		return p, nil
	}
	e, arg, err := lookup(spec.Mode)
	if err != nil {
		return nil, err
	}
	params := spec.Params
	params.Arg = arg
	f, err := e.Prepare(&params)
	if err != nil {
		return nil, fmt.Errorf("--decode %s: %w", spec.Mode, err)
	}
	p.entry, p.factory = e, f
	return p, nil
}

// Mode returns the plan's --decode value.
func (p *Plan) Mode() string { return p.spec.Mode }

// Output returns the plan's output mode.
func (p *Plan) Output() decode.Output { return p.spec.Output }

// Open returns the session that decodes src, the source env describes.
// For auto it looks at src's first records: a nil session means the
// records stay raw, and why says why (for .recfs and info). Sources
// opened by one plan (one command, one mount) share what their decoders
// keep with env.Shared, unless env brings its own.
func (p *Plan) Open(src decode.Records, env decode.Env) (s *decode.Session, why string, err error) {
	if env.Shared == nil {
		env.Shared = p.share
	}
	e, f := p.entry, p.factory
	why = "asked for"
	if e == nil {
		if e, why = p.choose(src, env); e == nil {
			return nil, why, nil
		}
		if f, err = p.autoFactory(e); err != nil {
			return nil, "", err
		}
	}
	d, err := f(env)
	if err != nil {
		return nil, "", fmt.Errorf("--decode %s: %w", e.Name, err)
	}
	return decode.NewSession(d, decode.SessionOptions{Name: e.Name, Output: p.spec.Output, MaxRecord: p.spec.MaxRecord, Why: why}), why, nil
}

// autoFactory prepares e for auto once.
func (p *Plan) autoFactory(e *Entry) (decode.Factory, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.autos[e.Name]; ok {
		return f, nil
	}
	params := p.spec.Params
	params.Arg = ""
	f, err := e.Prepare(&params)
	if err != nil {
		return nil, fmt.Errorf("--decode auto: %s: %w", e.Name, err)
	}
	if p.autos == nil {
		p.autos = map[string]decode.Factory{}
	}
	p.autos[e.Name] = f
	return f, nil
}

// Shapes of auto's look at a source.
const (
	autoRecords  = 8       // records looked at
	autoMaxBytes = 1 << 20 // of at most this size each
)

// choose picks the decoder of src by its first records, else by its name
// when it has none yet; nil with the reason when none or several fit.
func (p *Plan) choose(src decode.Records, env decode.Env) (*Entry, string) {
	base := path.Base(env.Path)
	for i := range registry {
		if e := &registry[i]; e.ByFraming && slices.Contains(e.Formats, env.Format) {
			return e, fmt.Sprintf("auto: a %v source's records are %s records", env.Format, e.Name)
		}
	}
	var recs [][]byte
	for n := int64(0); n < min(src.Len(), autoRecords); n++ {
		if src.Size(n) > autoMaxBytes {
			break
		}
		r, err := decode.ReadRecord(src, n, nil, autoMaxBytes)
		if err != nil {
			break
		}
		recs = append(recs, r)
	}
	if len(recs) == 0 {
		for i := range registry {
			if e := &registry[i]; e.Detect != nil && e.NameHint != nil && e.NameHint(base) && formatFits(e, env.Format) {
				return e, "auto: no records to look at; chosen by the file's name"
			}
		}
		return nil, "auto: raw: no records to look at"
	}
	if allJSON(recs) {
		return nil, fmt.Sprintf("auto: raw: the first %d records are JSON text already", len(recs))
	}
	var fits []*Entry
	for i := range registry {
		e := &registry[i]
		if e.Detect != nil && formatFits(e, env.Format) && e.Detect(recs) {
			fits = append(fits, e)
		}
	}
	if len(fits) > 1 {
		var named []*Entry
		for _, e := range fits {
			if e.NameHint != nil && e.NameHint(base) {
				named = append(named, e)
			}
		}
		if len(named) == 1 {
			return named[0], fmt.Sprintf("auto: the first %d records fit %s and the file's name says %s", len(recs), names(fits), named[0].Name)
		}
		return nil, fmt.Sprintf("auto: raw: ambiguous: the first %d records fit %s", len(recs), names(fits))
	}
	if len(fits) == 0 {
		return nil, fmt.Sprintf("auto: raw: no decoder fits the first %d records", len(recs))
	}
	return fits[0], fmt.Sprintf("auto: the first %d records are %s records", len(recs), fits[0].Name)
}

// formatFits reports whether e applies to framing f.
func formatFits(e *Entry, f codec.Format) bool {
	return e.Formats == nil || f == codec.Unknown || slices.Contains(e.Formats, f)
}

// allJSON reports whether every record is a JSON document.
func allJSON(recs [][]byte) bool {
	for _, r := range recs {
		if len(r) == 0 || !json.Valid(r) {
			return false
		}
	}
	return true
}

func names(es []*Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Name
	}
	return strings.Join(s, " and ")
}
