package sched

import (
	"errors"
	"testing"
)

func TestParseLicenseReq(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  bool
	}{
		{"matlab:2", "matlab:2", false},
		{"matlab:2,ansys", "matlab:2,ansys:1", false},
		{"matlab*3", "matlab:3", false},
		{"matlab:1,matlab:2", "matlab:3", false},
		{"", "(null)", false},
		{"matlab:-1", "", true},
		{"matlab:x", "", true},
		{"a|b", "", true},
		{",", "", true},
	}
	for _, c := range cases {
		got, err := ParseLicenseReq(c.in)
		if c.err {
			if !errors.Is(err, ErrInvalidLicense) {
				t.Errorf("%q: error %v, want %v", c.in, err, ErrInvalidLicense)
			}
			continue
		}
		if err != nil || FormatLicenseReq(got) != c.want {
			t.Errorf("%q: %v %v, want %s", c.in, FormatLicenseReq(got), err, c.want)
		}
	}
}

func TestFormatLicensesLayout(t *testing.T) {
	ls := []LicenseInfo{{Name: "matlab", Total: 4, Used: 1, Reserved: 2}}
	if got := FormatLicenses(ls, "", true); got != "LicenseName=matlab Total=4 Used=1 Free=1 Reserved=2 Remote=no\n" {
		t.Fatalf("one-liner %q", got)
	}
	if got := FormatLicenses(ls, "ansys", false); got != "" {
		t.Fatalf("unknown name %q", got)
	}
	if got := FormatLicenses(nil, "", false); got != "No licenses configured in Slurm.\n" {
		t.Fatalf("none %q", got)
	}
}

// FuzzParseLicenseReq: -L never panics, and what it accepts prints back
// to a value it accepts again with the same meaning.
func FuzzParseLicenseReq(f *testing.F) {
	for _, s := range []string{"matlab:2", "a:1,b*2,c", "x:99999999999999999999", "::", "a:1|b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := ParseLicenseReq(s)
		if err != nil || len(ls) == 0 {
			return
		}
		again, err := ParseLicenseReq(FormatLicenseReq(ls))
		if err != nil || FormatLicenseReq(again) != FormatLicenseReq(ls) {
			t.Fatalf("%q -> %q -> %v %v", s, FormatLicenseReq(ls), again, err)
		}
	})
}
