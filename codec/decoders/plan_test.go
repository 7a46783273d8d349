package decoders

import (
	"errors"
	"strings"
	"testing"

	"github.com/recfs/recfs/codec"
	"github.com/recfs/recfs/codec/codectest"
	"github.com/recfs/recfs/codec/decode"
)

type recs = decode.Slice

// edit is a VersionEdit: log number n, next file n+1.
func edit(n byte) []byte { return []byte{2, n, 3, n + 1} }

// TestAuto: --decode auto picks the decoder the first records fit, by
// name when there are no records yet, and stays raw, saying why, when
// none or several fit or the records are JSON.
func TestAuto(t *testing.T) {
	p, err := Prepare(Spec{Mode: ModeAuto})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		path   string
		format codec.Format
		recs   recs
		want   string // decoder, "" for raw
		why    string
	}{
		{"batches", "wal-backup.bin", codec.LevelDB, recs{codectest.PutBatch(1, "k", "v"), codectest.PutBatch(2, "a", "hello world")}, "batch", "the first 2 records are batch records"},
		{"edits", "x", codec.LevelDB, recs{edit(5), edit(7)}, "manifest", "manifest records"},
		{"empty log by name", "000042.log", codec.LevelDB, nil, "batch", "chosen by the file's name"},
		{"empty manifest by name", "MANIFEST-000001", codec.LevelDB, nil, "manifest", "chosen by the file's name"},
		{"empty other", "data", codec.LevelDB, nil, "", "no records to look at"},
		{"json", "events.log", codec.LevelDB, recs{[]byte(`{"a":1}`), []byte(`[2]`)}, "", "JSON text"},
		{"junk", "000042.log", codec.LevelDB, recs{codectest.PutBatch(1, "k", "v"), []byte("junk")}, "", "no decoder fits the first 2 records"},
		{"batches in a tfrecord", "x.tfrecord", codec.TFRecord, recs{codectest.PutBatch(1, "k", "v")}, "", "no decoder fits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, why, err := p.Open(tc.recs, decode.Env{Path: "/d/" + tc.path, Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if s != nil {
				got = s.Name()
				if s.Why() != why {
					t.Errorf("session says %q, Open %q", s.Why(), why)
				}
			}
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("chose %q (%s), want %q (%s)", got, why, tc.want, tc.why)
			}
		})
	}
}

// TestAutoAmbiguous: when two decoders fit, the file's name breaks the
// tie; without a name that does, the records stay raw.
func TestAutoAmbiguous(t *testing.T) {
	both := []Entry{
		{Name: "a", Detect: func([][]byte) bool { return true }, NameHint: func(b string) bool { return strings.HasSuffix(b, ".a") },
			Prepare: func(*decode.Params) (decode.Factory, error) {
				return decode.Static(decode.Func(func(*decode.Writer, *decode.Record) error { return nil })), nil
			}},
		{Name: "b", Detect: func([][]byte) bool { return true }},
	}
	saved := registry
	registry = both
	defer func() { registry = saved }()
	p, _ := Prepare(Spec{Mode: ModeAuto})
	if s, why, _ := p.Open(recs{[]byte("x")}, decode.Env{Path: "f.bin"}); s != nil || !strings.Contains(why, "ambiguous: the first 1 records fit a and b") {
		t.Errorf("no hint: %v, %q", s, why)
	}
	if s, why, _ := p.Open(recs{[]byte("x")}, decode.Env{Path: "f.a"}); s == nil || s.Name() != "a" {
		t.Errorf("hint .a: %v, %q", s, why)
	}
}

// TestModes: modes and their arguments are checked as usage errors.
func TestModes(t *testing.T) {
	for _, ok := range []string{"", "auto", "batch", "batch-rocksdb", "batch-pebble", "manifest", "example", "protobuf", "protobuf:pkg.Msg"} {
		if err := Check(ok); err != nil {
			t.Errorf("Check(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"wal", "batch:x", "auto:x", "BATCH", "example:x"} {
		if err := Check(bad); !errors.Is(err, ErrUsage) {
			t.Errorf("Check(%q): %v, want ErrUsage", bad, err)
		}
	}
	if p, err := Prepare(Spec{}); p != nil || err != nil {
		t.Errorf("no mode: %v, %v", p, err)
	}
	help := Help()
	for _, n := range Names() {
		if !strings.Contains(help, "  "+n) {
			t.Errorf("help does not list %s:\n%s", n, help)
		}
	}
}

// TestShared: the sources one plan opens share what their decoders keep
// under one key; another plan's do not.
func TestShared(t *testing.T) {
	var made []*int
	saved := registry
	registry = []Entry{{Name: "s", Prepare: func(*decode.Params) (decode.Factory, error) {
		return func(env decode.Env) (decode.Decoder, error) {
			made = append(made, env.Share("count", func() any { return new(int) }).(*int))
			return decode.Func(func(*decode.Writer, *decode.Record) error { return nil }), nil
		}, nil
	}}}
	defer func() { registry = saved }()
	p1, _ := Prepare(Spec{Mode: "s"})
	p2, _ := Prepare(Spec{Mode: "s"})
	for _, p := range []*Plan{p1, p1, p2} {
		if _, _, err := p.Open(recs{}, decode.Env{}); err != nil {
			t.Fatal(err)
		}
	}
	if made[0] != made[1] || made[0] == made[2] {
		t.Errorf("shared values %p %p %p: want the first two equal, the third apart", made[0], made[1], made[2])
	}
}
