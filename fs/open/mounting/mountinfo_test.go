package mounting

import (
	"strings"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	// Lines in the proc(5) layout, written by hand: optional fields vary,
	// and the mount point and source may hold escaped spaces.
	in := strings.Join([]string{
		"36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue",
		"43 27 0:40 / /tmp/a\\040b ro,nosuid,nodev,relatime - fuse.recfs /data/x\\040y.log ro,user_id=0,group_id=0",
		"44 27 0:41 / /srv/m rw shared:5 master:2 - fuse.recfs /data/z rw",
		"garbage",
		"",
	}, "\n")
	got, err := ParseMountinfo(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Point: "/mnt/parent", FSType: "ext3", Source: "/dev/root"},
		{Point: "/tmp/a b", FSType: "fuse.recfs", Source: "/data/x y.log"},
		{Point: "/srv/m", FSType: "fuse.recfs", Source: "/data/z"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:   "/a b",
		`/tab\011x`: "/tab\tx",
		`/back\134`: `/back\`,
		`/plain`:    "/plain",
		`/short\04`: `/short\04`,
		`/bad\999`:  `/bad\999`,
	} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a", true},
		{"/a", "/a", true},
		{"/a/b/c", "/a/b", true},
		{"/ab", "/a", false},
		{"/a", "/a/b", false},
		{"/x/..y", "/x", true},
		{"/", "/a", false},
		{"/a", "/", true},
	} {
		if got := Within(tc.path, tc.dir); got != tc.want {
			t.Errorf("Within(%q, %q) = %v, want %v", tc.path, tc.dir, got, tc.want)
		}
	}
}

// FuzzParseMountinfo feeds arbitrary text to the mountinfo parser: it must
// not panic, it returns at most one entry per line, and every entry has a
// type.
func FuzzParseMountinfo(f *testing.F) {
	f.Add("36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw\n")
	f.Add("43 27 0:40 / /tmp/a\\040b ro - fuse.recfs /x\\ ro\n")
	f.Add("1 2 3 4 5 6 - \n")
	f.Fuzz(func(t *testing.T, in string) {
		ents, err := ParseMountinfo(strings.NewReader(in))
		if err != nil {
			return
		}
		if lines := strings.Count(in, "\n") + 1; len(ents) > lines {
			t.Fatalf("%d entries from %d lines", len(ents), lines)
		}
		for _, e := range ents {
			if e.FSType == "" {
				t.Fatalf("entry without a type: %+v", e)
			}
		}
	})
}
