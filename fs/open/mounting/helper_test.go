package mounting

import (
	"errors"
	"os"
	"os/user"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestHelperOptions: a -o list splits into its options in order, without
// empty ones and without mount(8)'s generic ones, unless a generic name
// is given a value.
func TestHelperOptions(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []Option
	}{
		{"", nil},
		{",,", nil},
		{"ro", []Option{{Raw: "ro", Name: "ro"}}},
		{"ro,allow_other", []Option{{Raw: "ro", Name: "ro"}, {Raw: "allow_other", Name: "allow_other"}}},
		{"cache_dir=/a=b", []Option{{Raw: "cache_dir=/a=b", Name: "cache_dir", Value: "/a=b", HasValue: true}}},
		{"defaults,noauto,_netdev,nosuid,noatime,sync,loud", nil},
		{"x-systemd.automount,x-x=1,comment=hi,subtype=recfs", nil},
		{"user=x", []Option{{Raw: "user=x", Name: "user", Value: "x", HasValue: true}}},
		{"subtype=other", []Option{{Raw: "subtype=other", Name: "subtype", Value: "other", HasValue: true}}},
		{"noauto,rw,,nofail", []Option{{Raw: "rw", Name: "rw"}}},
		{"empty=", []Option{{Raw: "empty=", Name: "empty", HasValue: true}}},
	} {
		if got := HelperOptions(tc.list); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HelperOptions(%q) = %+v, want %+v", tc.list, got, tc.want)
		}
	}
}

// FuzzHelperOptions: every option kept is a non-empty element of the
// list, in order, and splits back into its name and value.
func FuzzHelperOptions(f *testing.F) {
	for _, s := range []string{"", "ro,allow_other", "uid=1,x-a,,comment=b", "a=b=c,defaults"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		parts := strings.Split(list, ",")
		for _, o := range HelperOptions(list) {
			i := slices.Index(parts, o.Raw)
			if o.Raw == "" || i < 0 {
				t.Fatalf("HelperOptions(%q): %+v is not an element after the previous one", list, o)
			}
			parts = parts[i+1:]
			want := o.Name
			if o.HasValue {
				want += "=" + o.Value
			}
			if want != o.Raw {
				t.Fatalf("HelperOptions(%q): %+v does not rejoin into its text", list, o)
			}
		}
	})
}

// TestPasswdHome: the home directory of a getent passwd line.
func TestPasswdHome(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"alice:*:10001:10001:Alice A:/home/alice:/bin/bash\n", "/home/alice"},
		{"bob:x:10002:100::/net/home/bob:/bin/sh", "/net/home/bob"},
		{"carol:x:10003:100:C:/home/carol:/bin/sh\nother:x:1:1::/x:/bin/sh\n", "/home/carol"},
		{"", ""},
		{"dave:x:10004:100:/home/dave", ""}, // too few fields
		{"erin:x:10005:100::relative:/bin/sh\n", ""}, // not absolute
	} {
		if got := passwdHome([]byte(tc.in)); got != tc.want {
			t.Errorf("passwdHome(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestHomeDirFallsBackToGetent: a user the Go lookup does not know (an
// LDAP or sssd user under the lean, cgo-less binary) gets getent's home
// directory; a known user does not run getent.
func TestHomeDirFallsBackToGetent(t *testing.T) {
	unknown := func() (*user.User, error) { return nil, user.UnknownUserIdError(os.Getuid()) }
	known := func() (*user.User, error) { return &user.User{HomeDir: "/home/local"}, nil }
	var asked []string
	getent := func(uid string) ([]byte, error) {
		asked = append(asked, uid)
		return []byte("ldapuser:*:" + uid + ":100:LDAP user:/home/ldapuser:/bin/bash\n"), nil
	}
	failing := func(string) ([]byte, error) { return nil, errors.New("exit status 2") }
	if got := homeDir(unknown, getent); got != "/home/ldapuser" {
		t.Errorf("unknown user: home %q, want /home/ldapuser", got)
	}
	if want := []string{strconv.Itoa(os.Getuid())}; !slices.Equal(asked, want) {
		t.Errorf("getent asked for %q, want %q", asked, want)
	}
	asked = nil
	if got := homeDir(known, getent); got != "/home/local" || len(asked) != 0 {
		t.Errorf("known user: home %q, getent asked %q; want /home/local and no getent", got, asked)
	}
	if got := homeDir(unknown, failing); got != "" {
		t.Errorf("unknown to both: home %q, want none", got)
	}
}
