package contacts

import (
	"strings"
	"testing"
)

const appleCard = "BEGIN:VCARD\r\n" +
	"VERSION:3.0\r\n" +
	"PRODID:-//Apple Inc.//iOS 17.0//EN\r\n" +
	"N:Lovelace;Ada;Augusta;Countess;\r\n" +
	"FN:Ada Lovelace\r\n" +
	"ORG:Analytical Engines;Research\r\n" +
	"EMAIL;type=INTERNET;type=HOME;type=pref:ada@example.org\r\n" +
	"EMAIL;type=INTERNET;type=WORK:ada@engines.example\r\n" +
	"item1.TEL;type=pref:+44 20 7946 0000\r\n" +
	"item1.X-ABLabel:_$!<Mobile>!$_\r\n" +
	"TEL;TYPE=X-SATELLITE:+881 631 234 567\r\n" +
	"item2.ADR;type=HOME:;;12 St James's Square;London;;SW1Y 4JH;UK\r\n" +
	"CATEGORIES:math,poetry\r\n" +
	"BDAY;VALUE=date:1815-12-10\r\n" +
	"NOTE:Wrote the first program\\, arguably.\r\n" +
	"X-SOCIALPROFILE;type=twitter:x-apple:ada\r\n" +
	"PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQ\r\n" +
	" DQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQ=\r\n" +
	"UID:4F6B1B2C-0000-4000-8000-ADA000000001\r\n" +
	"END:VCARD\r\n"

func TestMapOut(t *testing.T) {
	t.Parallel()
	v4 := "BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;;\r\nEMAIL;TYPE=work:grace@navy.example\r\n" +
		"EMAIL;PREF=1:grace@home.example\r\nTEL;VALUE=uri;TYPE=cell:tel:+1-555-0100\r\nBDAY:19061209\r\nEND:VCARD\r\n"
	cases := []struct {
		name, card                       string
		display, first, last, org, title string
		email, phone, birthday, notes    string
		emails, phones, addrs            int
		firstEmailType, firstPhoneType   string
	}{
		{"apple 3.0", appleCard, "Ada Lovelace", "Ada", "Lovelace", "Analytical Engines", "", "ada@example.org", "+44 20 7946 0000",
			"1815-12-10", "Wrote the first program, arguably.", 2, 2, 1, "home", "other"},
		{"vcard 4.0", v4, "Grace Hopper", "Grace", "Hopper", "", "", "grace@home.example", "+1-555-0100", "1906-12-09", "", 2, 1, 0, "work", "cell"},
		{"no FN", "BEGIN:VCARD\nVERSION:3.0\nN:Doe;Jane;;;\nEND:VCARD\n", "Jane Doe", "Jane", "Doe", "", "", "", "", "", "", 0, 0, 0, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := parseDoc([]byte(c.card))
			if err != nil {
				t.Fatal(err)
			}
			f, email, phone := mapOut(d)
			got := []string{f.DisplayName, f.FirstName, f.LastName, f.Organization, f.JobTitle, email, phone, f.Birthday, f.Notes}
			want := []string{c.display, c.first, c.last, c.org, c.title, c.email, c.phone, c.birthday, c.notes}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("fields\n got %q\nwant %q", got, want)
			}
			if len(f.Emails) != c.emails || len(f.Phones) != c.phones || len(f.Addresses) != c.addrs {
				t.Errorf("counts %d %d %d", len(f.Emails), len(f.Phones), len(f.Addresses))
			}
			if c.emails > 0 && f.Emails[0].Type != c.firstEmailType || c.phones > 0 && f.Phones[0].Type != c.firstPhoneType {
				t.Errorf("types %+v %+v", f.Emails, f.Phones)
			}
		})
	}
}

// An edit rewrites only the lines it changes; every other line stays byte for
// byte and in place.
func TestApplyKeepsUnchangedLines(t *testing.T) {
	t.Parallel()
	d, err := parseDoc([]byte(appleCard))
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ := mapOut(d)
	if apply(d, f); string(d.bytes()) != appleCard {
		t.Fatalf("applying the unchanged fields changed the card:\n%s", d.bytes())
	}
	f.JobTitle = "Mathematician"
	f.Emails = []Email{{Type: "home", Value: "ada@example.org"}, {Type: "work", Value: "ada@new.example"}}
	f.Phones = f.Phones[:1]
	f.Addresses[0].City = "Marylebone"
	f.Birthday = "1815-12-11"
	apply(d, f)
	out := string(d.bytes())
	for _, line := range []string{"PRODID:-//Apple Inc.//iOS 17.0//EN", "N:Lovelace;Ada;Augusta;Countess;", "FN:Ada Lovelace",
		"ORG:Analytical Engines;Research", "EMAIL;type=INTERNET;type=HOME;type=pref:ada@example.org", "item1.TEL;type=pref:+44 20 7946 0000",
		"item1.X-ABLabel:_$!<Mobile>!$_", "CATEGORIES:math,poetry", "NOTE:Wrote the first program\\, arguably.",
		"X-SOCIALPROFILE;type=twitter:x-apple:ada", "UID:4F6B1B2C-0000-4000-8000-ADA000000001",
		"PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQ\r\n DQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQ=",
	} {
		if !strings.Contains(out, line+"\r\n") {
			t.Errorf("lost %q:\n%s", line, out)
		}
	}
	for _, line := range []string{"TITLE:Mathematician", "EMAIL;TYPE=WORK:ada@new.example", "ADR;TYPE=HOME:;;12 St James's Square;Marylebone;;SW1Y 4JH;UK",
		"BDAY;VALUE=date:1815-12-11"} {
		if !strings.Contains(out, line+"\r\n") {
			t.Errorf("missing %q:\n%s", line, out)
		}
	}
	for _, gone := range []string{"ada@engines.example", "X-SATELLITE"} {
		if strings.Contains(out, gone) {
			t.Errorf("still has %q", gone)
		}
	}
	if !strings.HasPrefix(out, "BEGIN:VCARD\r\nVERSION:3.0\r\nPRODID") || !strings.HasSuffix(out, "END:VCARD\r\n") {
		t.Errorf("frame changed:\n%s", out)
	}
	// The result reads back as what was written.
	d2, err := parseDoc([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	f2, _, _ := mapOut(d2)
	if f2.JobTitle != "Mathematician" || len(f2.Emails) != 2 || f2.Addresses[0].City != "Marylebone" || f2.Birthday != "1815-12-11" {
		t.Errorf("read back %+v", f2)
	}
}

func TestNewCardEscapes(t *testing.T) {
	t.Parallel()
	d := newDoc("urn:uuid:x")
	f := Fields{FirstName: "Jean; Luc", LastName: "Picard, J.", Notes: "line one\nline two", Organization: "Starfleet; Command",
		Emails: []Email{{Type: "work", Value: "jl@starfleet.example"}}}
	if err := normalize(&f, ""); err != nil {
		t.Fatal(err)
	}
	apply(d, f)
	out := string(d.bytes())
	for _, want := range []string{"VERSION:4.0\r\n", "N:Picard\\, J.;Jean\\; Luc;;;\r\n", "FN:Jean\\; Luc Picard\\, J.\r\n",
		"NOTE:line one\\nline two\r\n", "ORG:Starfleet\\; Command\r\n", "EMAIL;TYPE=work:jl@starfleet.example\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	d2, err := parseDoc([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	f2, _, _ := mapOut(d2)
	if f2.FirstName != f.FirstName || f2.LastName != f.LastName || f2.Notes != f.Notes || f2.Organization != f.Organization || f2.DisplayName != f.DisplayName {
		t.Errorf("round trip %+v != %+v", f2, f)
	}
}

func TestParseDocErrors(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"not a vCard":  "hello",
		"two cards":    "BEGIN:VCARD\nVERSION:4.0\nFN:a\nEND:VCARD\nBEGIN:VCARD\nVERSION:4.0\nFN:b\nEND:VCARD\n",
		"no END":       "BEGIN:VCARD\nVERSION:4.0\nFN:a\n",
		"no VERSION":   "BEGIN:VCARD\nFN:a\nEND:VCARD\n",
		"invalid utf8": "BEGIN:VCARD\nVERSION:4.0\nFN:\xff\nEND:VCARD\n",
	} {
		if _, err := parseDoc([]byte(in)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestFold(t *testing.T) {
	t.Parallel()
	long := "NOTE:" + strings.Repeat("ü", 60)
	out := fold(long)
	for _, l := range strings.Split(out, "\r\n") {
		if len(l) > 75 {
			t.Errorf("line of %d octets", len(l))
		}
	}
	if strings.ReplaceAll(out, "\r\n ", "") != long {
		t.Errorf("unfolds to something else")
	}
}

func TestSearchTerms(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ada":                                 `ada`,
		"  Zoë  Müller ":                      `Zoë Müller`,
		"ada@example.org":                     `ada example org`,
		`"x" OR y NEAR(z)`:                    `x OR y NEAR z`,
		"+49 (30) 123":                        `49 30 123`,
		"*^-:":                                ``,
		"a b c d e f g h i j k l m n o p q r": `a b c d e f g h i j k l m n o p`,
	} {
		if got := strings.Join(SearchTerms(in), " "); got != want {
			t.Errorf("SearchTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchETag(t *testing.T) {
	t.Parallel()
	const tag = `"abc"`
	for _, c := range []struct {
		header string
		ok     bool
	}{{"", true}, {"*", true}, {`"abc"`, true}, {`"x", "abc"`, true}, {`abc`, true}, {`"abd"`, false}, {`W/"abc"`, false}} {
		if got := MatchETag(c.header, tag); got != c.ok {
			t.Errorf("MatchETag(%q) = %v", c.header, got)
		}
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Zoë Müller": "Zoë Müller.vcf", `../../etc/"x"`: "etcx.vcf", "": "contact.vcf", "a/b\\c": "abc.vcf"} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestToV4(t *testing.T) {
	t.Parallel()
	d, err := parseDoc([]byte(appleCard))
	if err != nil {
		t.Fatal(err)
	}
	toV4(d)
	out := string(d.bytes())
	for _, want := range []string{"BEGIN:VCARD\r\nVERSION:4.0\r\n", "EMAIL;PREF=1;TYPE=home:ada@example.org\r\n", "EMAIL;TYPE=work:ada@engines.example\r\n",
		"item1.TEL;PREF=1:+44 20 7946 0000\r\n", "CATEGORIES:math,poetry\r\n", "BDAY:18151210\r\n", "item1.X-ABLabel:_$!<Mobile>!$_\r\n",
		"PHOTO:data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQ=",
		"NOTE:Wrote the first program\\, arguably.\r\n"} {
		if !strings.Contains(strings.ReplaceAll(out, "\r\n ", ""), want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "INTERNET") || strings.Contains(out, "ENCODING") {
		t.Errorf("vCard 3.0 parameters left:\n%s", out)
	}
	if _, err := parseDoc([]byte(out)); err != nil {
		t.Fatal(err)
	}
}
