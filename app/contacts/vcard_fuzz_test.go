package contacts

import "testing"

// FuzzParseVCard checks that a body that parses as a vCard can be mapped to the
// contact model, the model applied back, written, and converted to vCard 4.0
// without panicking, and that a parsed card written back unchanged parses again.
func FuzzParseVCard(f *testing.F) {
	f.Add([]byte(appleCard))
	f.Add([]byte("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Grace Hopper\r\nN:Hopper;Grace;;;\r\nEMAIL;TYPE=work:grace@navy.example\r\n" +
		"EMAIL;PREF=1:grace@home.example\r\nTEL;VALUE=uri;TYPE=cell:tel:+1-555-0100\r\nBDAY:19061209\r\nEND:VCARD\r\n"))
	f.Add([]byte("BEGIN:VCARD\nVERSION:3.0\nN:Doe;Jane;;;\nEND:VCARD\n"))
	f.Add([]byte("BEGIN:VCARD\r\nVERSION:2.1\r\nN:Agent;Secret\r\nAGENT:\r\nBEGIN:VCARD\r\nVERSION:2.1\r\nFN:Inner\r\nEND:VCARD\r\nEND:VCARD\r\n"))
	f.Add([]byte("\uFEFFBEGIN:VCARD\r\nVERSION:3.0\r\nADR;TYPE=work:;;1 Infinite Loop\\;Suite 2;Cupertino;CA;95014;USA\r\nBDAY:--0412\r\nNOTE:line\\nbreak\r\n folded\r\nEND:VCARD\r\n"))
	f.Add([]byte("BEGIN:VCARD\r\nVERSION:3.0\r\nEND:VCARD\r\nBEGIN:VCARD\r\nEND:VCARD\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := parseDoc(data)
		if err != nil {
			return
		}
		if _, err := parseDoc(d.bytes()); err != nil {
			t.Fatalf("written back unchanged, the card no longer parses: %v\n%q", err, d.bytes())
		}
		// What is stored is also read by go-vcard (DAV query filters).
		_, _ = Card(ContactDetail{VCard: string(d.bytes())})
		fields, _, _ := mapOut(d)
		apply(d, fields)
		_ = d.bytes()
		toV4(d)
		_ = d.bytes()
	})
}
