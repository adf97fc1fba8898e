#!/bin/sh
# make_certs.sh DIR: the certificates of the TLS tests, made with openssl
# into DIR: two CAs (ca, ca2) and a third one no server trusts (other); the
# server's certificate for 127.0.0.1, ::1 and localhost from each of ca and ca2
# (server, server2), and a replica's for both ends of a forward (peer: the
# server's names, for serving and as a client); client certificates from ca: ops (CN=ops-bot,
# O=csched-test), admin (CN=admin-bot), nobody (CN=nobody-bot); and from
# other: stranger (CN=ops-bot). Each NAME gets NAME.pem and NAME.key (0600).
set -eu
cd "$1"

key() {
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null
    chmod 600 "$1.key"
}

ca() {
    key "$1"
    openssl req -x509 -new -key "$1.key" -subj "/CN=csched test $1" -days 2 -out "$1.pem"
}

# leaf NAME CA SUBJECT EXTENSIONS
leaf() {
    key "$1"
    openssl req -new -key "$1.key" -subj "$3" -out "$1.csr"
    printf '%s\n' "$4" >"$1.ext"
    openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
        -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm -f "$1.csr" "$1.ext"
}

ca ca
ca ca2
ca other
server_ext="subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
extendedKeyUsage=serverAuth"
client_ext="extendedKeyUsage=clientAuth"
leaf server ca "/CN=localhost" "$server_ext"
leaf server2 ca2 "/CN=localhost" "$server_ext"
leaf peer ca "/CN=localhost" "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost
extendedKeyUsage=serverAuth,clientAuth"
leaf ops ca "/O=csched-test/CN=ops-bot" "$client_ext"
leaf admin ca "/CN=admin-bot" "$client_ext"
leaf nobody ca "/CN=nobody-bot" "$client_ext"
leaf stranger other "/CN=ops-bot" "$client_ext"
