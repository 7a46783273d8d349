package dbdecode

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/recfs/recfs/codec/decode"
)

// fakeDir is a directory of plain files and record files in memory.
type fakeDir struct {
	files   map[string][]byte
	records map[string]decode.Slice
}

func (d fakeDir) Names() ([]string, error) {
	var out []string
	for n := range d.files {
		out = append(out, n)
	}
	for n := range d.records {
		out = append(out, n)
	}
	return out, nil
}

func (d fakeDir) ReadFile(name string, max int64) ([]byte, error) {
	if b, ok := d.files[name]; ok && int64(len(b)) <= max {
		return b, nil
	}
	return nil, fs.ErrNotExist
}

type closingSlice struct{ decode.Slice }

func (closingSlice) Close() error { return nil }

func (d fakeDir) OpenRecords(name string) (decode.RecordsCloser, error) {
	if r, ok := d.records[name]; ok {
		return closingSlice{r}, nil
	}
	return nil, errors.New("no such record file")
}

// TestCFNamesBeside: the MANIFEST that CURRENT names wins; without
// CURRENT the highest MANIFEST; without a MANIFEST the newest OPTIONS
// names families by position; with nothing, no names.
func TestCFNamesBeside(t *testing.T) {
	named := func(id int, name string) decode.Slice {
		return decode.Slice{rec(1, "leveldb.BytewiseComparator"), rec(201, name, 200, id)}
	}
	options := []byte("[Version]\n  rocksdb_version=8.9.1\n[CFOptions \"default\"]\n  ttl=0\n[CFOptions \"user data\"]\n")
	for _, tc := range []struct {
		name string
		dir  fakeDir
		want map[uint64]string
		from string
	}{
		{"CURRENT", fakeDir{files: map[string][]byte{"CURRENT": []byte("MANIFEST-000007\n"), "OPTIONS-000009": options},
			records: map[string]decode.Slice{"MANIFEST-000007": named(3, "seven"), "MANIFEST-000012": named(3, "twelve")}},
			map[uint64]string{0: "default", 3: "seven"}, "MANIFEST-000007"},
		{"newest MANIFEST", fakeDir{records: map[string]decode.Slice{"MANIFEST-000007": named(3, "seven"), "MANIFEST-000012": named(3, "twelve")}},
			map[uint64]string{0: "default", 3: "twelve"}, "MANIFEST-000012"},
		{"CURRENT naming no file", fakeDir{files: map[string][]byte{"CURRENT": []byte("../../etc/passwd\n")},
			records: map[string]decode.Slice{"MANIFEST-000012": named(1, "one")}},
			map[uint64]string{0: "default", 1: "one"}, "MANIFEST-000012"},
		{"OPTIONS only", fakeDir{files: map[string][]byte{"OPTIONS-000005": []byte("[CFOptions \"old\"]\n"), "OPTIONS-000009": options}},
			map[uint64]string{0: "default", 1: "user data"}, "OPTIONS-000009"},
		{"nothing", fakeDir{files: map[string][]byte{"LOG": []byte("x")}}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, from, err := CFNamesBeside(tc.dir)
			if err != nil || from != tc.from || len(names) != len(tc.want) {
				t.Fatalf("%v from %q (%v); want %v from %q", names, from, err, tc.want, tc.from)
			}
			for id, n := range tc.want {
				if names[id] != n {
					t.Fatalf("%v; want %v", names, tc.want)
				}
			}
		})
	}
}
