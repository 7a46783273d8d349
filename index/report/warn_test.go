package report

import (
	"bytes"
	"testing"

	"github.com/recfs/recfs/codec"
)

func TestWarnDamaged(t *testing.T) {
	t.Parallel()
	stale := codec.Damage{Off: 900, Len: 100, Err: codec.ErrStale}
	bad := func(off int64) codec.Damage { return codec.Damage{Off: off, Len: 10, Err: codec.ErrCorrupt} }
	const tail = "; records after it are numbered as found, not as written (recfs verify f.log lists the damage)\n"
	for _, tc := range []struct {
		name string
		ds   []codec.Damage
		want string
	}{
		{"clean", nil, ""},
		{"stale tail only", []codec.Damage{stale}, ""},
		{"one", []codec.Damage{bad(32868)}, "recfs: warning: f.log is damaged (1 range skipped, the first at offset 32868)" + tail},
		{"stale first", []codec.Damage{stale, bad(40), bad(70)}, "recfs: warning: f.log is damaged (2 ranges skipped, the first at offset 40)" + tail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			WarnDamaged(&b, "f.log", tc.ds)
			if b.String() != tc.want {
				t.Errorf("got %q\nwant %q", b.String(), tc.want)
			}
		})
	}
}
