package bazil

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

func TestServedUntilUnmount(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "no-such-mountpoint")
	other := errors.New("read /dev/fuse: broken")
	cases := []struct {
		name string
		err  error
		dir  string
		want error
	}{
		{"clean", nil, dir, nil},
		{"aborted-after-unmount", syscall.ECONNABORTED, dir, nil},
		{"aborted-dead-mount", syscall.ECONNABORTED, gone, syscall.ECONNABORTED},
		{"other-error", other, dir, other},
	}
	for _, c := range cases {
		if got := servedUntilUnmount(c.err, c.dir); !errors.Is(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
