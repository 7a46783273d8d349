package dbdecode

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/recfs/recfs/codec/decode"
)

// misfit turns a *DecodeError into the seam's misfit error.
func misfit(err error) error {
	if err == nil {
		return nil // no errors.As: its target would escape, one allocation per record
	}
	var de *DecodeError
	if errors.As(err, &de) {
		return decode.Misfit(de.At, "%s", de.Reason)
	}
	return err
}

// BatchDecoder is the decoder of WriteBatch records (--decode batch). It
// names column families when it has their names: from the MANIFEST given
// (--manifest), else from the MANIFEST (or OPTIONS file) beside the WAL,
// read the first time an operation names a column family.
type BatchDecoder struct {
	o      Options
	dir    decode.Dir // where to look for names; nil: nowhere
	once   sync.Once
	loaded atomic.Bool       // names were looked for beside the WAL
	names  map[uint64]string // what was found, once loaded
	mu     sync.Mutex
	from   string // what named the column families
}

// NewBatch returns the decoder of WriteBatches with options o; with a
// Dir, it looks beside the WAL for column family names.
func NewBatch(o Options, dir decode.Dir) *BatchDecoder {
	return &BatchDecoder{o: o, dir: dir}
}

// Decode writes the lines of one WriteBatch.
func (b *BatchDecoder) Decode(w *decode.Writer, rec *decode.Record) error {
	o := b.o
	if b.dir != nil && o.CFNames == nil {
		if !b.loaded.Load() && hasCF(rec.Payload) {
			b.once.Do(b.loadNames)
		}
		if b.loaded.Load() {
			o.CFNames = b.names
		}
	}
	return misfit(writeBatch(w, rec.Payload, o))
}

// Describe says what named the column families.
func (b *BatchDecoder) Describe() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.from == "" {
		return ""
	}
	return "column families named by " + b.from
}

// loadNames reads column family names beside the WAL; once.
func (b *BatchDecoder) loadNames() {
	names, from, err := CFNamesBeside(b.dir)
	if err == nil && names != nil {
		b.names = names
		b.mu.Lock()
		b.from = from
		b.mu.Unlock()
	}
	b.loaded.Store(true)
}

// hasCF reports whether a batch may hold an operation naming a column
// family: a byte of RocksDB's -cf tags anywhere past the header. It errs
// towards yes; it only saves reading names for batches without one.
func hasCF(rec []byte) bool {
	if len(rec) <= BatchHeaderLen {
		return false
	}
	for _, c := range rec[BatchHeaderLen:] {
		if c == 4 || c == 5 || c == 6 || c == 8 || c == 14 || c == 16 || c == 23 || c == 25 {
			return true
		}
	}
	return false
}

// PrepareBatch returns the registry's constructor of batch decoders of
// dialect d: --manifest FILE names column families for every source.
func PrepareBatch(d Dialect) func(*decode.Params) (decode.Factory, error) {
	return func(p *decode.Params) (decode.Factory, error) {
		var names map[uint64]string
		var from string
		if p.Manifest != "" {
			if p.OpenRecords == nil {
				return nil, errors.New("--manifest: no record files can be opened here")
			}
			m, err := p.OpenRecords(p.Manifest)
			if err != nil {
				return nil, fmt.Errorf("--manifest: %w", err)
			}
			names, err = CFNames(m)
			m.Close()
			if err != nil {
				return nil, fmt.Errorf("--manifest %s: %w", p.Manifest, err)
			}
			from = p.Manifest
		}
		return func(env decode.Env) (decode.Decoder, error) {
			b := NewBatch(Options{Dialect: d, CFNames: names}, env.Dir)
			b.from = from
			if names != nil {
				b.dir = nil
			}
			return b, nil
		}, nil
	}
}

// PrepareManifest is the registry's constructor of manifest decoders.
func PrepareManifest(*decode.Params) (decode.Factory, error) {
	return func(env decode.Env) (decode.Decoder, error) {
		return NewManifest(env.StateBudget()), nil
	}, nil
}

// DetectBatch reports whether recs, the first records of a source, are
// WriteBatches: each decodes and one holds an operation.
func DetectBatch(recs [][]byte) bool {
	ops := false
	for _, r := range recs {
		if _, err := AppendBatch(nil, r, Options{}); err != nil {
			return false
		}
		ops = ops || len(r) > BatchHeaderLen
	}
	return ops
}

// DetectManifest reports whether recs, the first records of a source,
// are VersionEdits: each decodes and one is not empty.
func DetectManifest(recs [][]byte) bool {
	fields := false
	for _, r := range recs {
		if _, err := AppendVersionEdit(nil, r); err != nil {
			return false
		}
		fields = fields || len(r) > 0
	}
	return fields
}

// CFNames reads the column family names a MANIFEST's edits give: each
// edit that adds a family pairs its id (column-family, 0 when absent)
// with its name. A dropped family keeps its name: older WAL records may
// still use it. Edits that do not decode are skipped.
func CFNames(m decode.Records) (map[uint64]string, error) {
	names := map[uint64]string{0: "default"}
	var buf []byte
	for n := int64(0); n < m.Len(); n++ {
		raw, err := decode.ReadRecord(m, n, buf, decode.DefaultMaxRecord)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", n, err)
		}
		buf = raw[:0]
		e := editReader{r: reader{b: raw}}
		var id uint64
		var name []byte
		for {
			ok, err := e.next()
			if err != nil || !ok {
				break
			}
			switch e.f.tag {
			case tagColumnFamily:
				id = e.f.parts[0].num
			case tagColumnFamilyAdd:
				name = e.f.parts[0].b
			}
		}
		if name != nil {
			names[id] = string(name)
		}
	}
	return names, nil
}

// maxOptions bounds the OPTIONS file read.
const maxOptions = 4 << 20

// CFNamesBeside finds the column family names of a WAL from the files of
// its directory: the MANIFEST that CURRENT names, else the MANIFEST with
// the highest number, else the newest OPTIONS file, whose CFOptions
// sections name the families in the order of their ids (exact unless one
// was dropped). It returns nil names when none of them is there, and
// from, the file read.
func CFNamesBeside(dir decode.Dir) (names map[uint64]string, from string, err error) {
	list, err := dir.Names()
	if err != nil {
		return nil, "", err
	}
	manifest := ""
	if cur, err := dir.ReadFile("CURRENT", 256); err == nil {
		if s := strings.TrimSpace(string(cur)); isFileName(s, "MANIFEST-") {
			manifest = s
		}
	}
	if manifest == "" {
		manifest = newest(list, "MANIFEST-")
	}
	if manifest != "" {
		if m, err := dir.OpenRecords(manifest); err == nil {
			names, err = CFNames(m)
			m.Close()
			if err == nil {
				return names, manifest, nil
			}
		}
	}
	opts := newest(list, "OPTIONS-")
	if opts == "" {
		return nil, "", nil
	}
	text, err := dir.ReadFile(opts, maxOptions)
	if err != nil {
		return nil, "", err
	}
	names = map[uint64]string{}
	for _, l := range bytes.Split(text, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if name, ok := bytes.CutPrefix(l, []byte(`[CFOptions "`)); ok && bytes.HasSuffix(name, []byte(`"]`)) {
			names[uint64(len(names))] = string(name[:len(name)-2])
		}
	}
	if len(names) == 0 {
		return nil, "", nil
	}
	return names, opts, nil
}

// isFileName reports whether s is prefix followed by decimal digits.
func isFileName(s, prefix string) bool {
	num, ok := strings.CutPrefix(s, prefix)
	if !ok || num == "" {
		return false
	}
	_, err := strconv.ParseUint(num, 10, 64)
	return err == nil
}

// newest returns the name of list that is prefix and the highest number.
func newest(list []string, prefix string) string {
	var cands []string
	for _, n := range list {
		if isFileName(n, prefix) {
			cands = append(cands, n)
		}
	}
	if len(cands) == 0 {
		return ""
	}
	return slices.MaxFunc(cands, func(a, b string) int {
		x, _ := strconv.ParseUint(a[len(prefix):], 10, 64)
		y, _ := strconv.ParseUint(b[len(prefix):], 10, 64)
		return cmp.Compare(x, y)
	})
}
