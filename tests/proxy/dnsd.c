/*
 * dnsd.c - a tiny authoritative DNS server for the end-to-end tests.
 *
 *   dnsd [--log FILE] NAME=ADDRESS...
 *
 * Answers A and AAAA queries on 127.0.0.1 (UDP, a free port, printed as
 * "ready PORT") from the NAME=ADDRESS pairs (IPv4 or IPv6, a name may
 * repeat), NOERROR with no answer for a known name without that type,
 * NXDOMAIN otherwise.  Every query is logged as "query NAME TYPE", so a
 * test can count how often the proxy asked.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

struct entry {
	char name[256];
	int family;
	unsigned char addr[16];
};

static struct entry table[64];
static size_t n_table;

int
main(int argc, char **argv)
{
	struct sockaddr_in sin = {0};
	socklen_t slen = sizeof(sin);
	FILE *log_file = stderr;
	int fd, i = 1;

	if (argc > 2 && !strcmp(argv[1], "--log")) {
		log_file = fopen(argv[2], "a");
		if (!log_file) {
			perror(argv[2]);
			return 1;
		}
		i = 3;
	}
	for (; i < argc && n_table < 64; i++) {
		char *eq = strchr(argv[i], '=');
		struct entry *e = &table[n_table];

		if (!eq || (size_t)(eq - argv[i]) >= sizeof(e->name)) {
			fprintf(stderr, "dnsd: bad entry %s\n", argv[i]);
			return 2;
		}
		memcpy(e->name, argv[i], (size_t)(eq - argv[i]));
		if (inet_pton(AF_INET, eq + 1, e->addr) == 1)
			e->family = AF_INET;
		else if (inet_pton(AF_INET6, eq + 1, e->addr) == 1)
			e->family = AF_INET6;
		else {
			fprintf(stderr, "dnsd: bad address %s\n", eq + 1);
			return 2;
		}
		n_table++;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0) {
		perror("dnsd");
		return 1;
	}
	printf("ready %u\n", ntohs(sin.sin_port));
	fflush(stdout);
	for (;;) {
		unsigned char q[512], r[1024];
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);
		char name[256];
		size_t pos = 12, nl = 0, rl, ans = 0;
		unsigned qtype;
		bool known = false;

		if (n < 17 || (q[2] & 0x80))
			continue;
		while (pos < (size_t)n && q[pos]) {
			size_t l = q[pos++];

			if (l > 63 || pos + l > (size_t)n || nl + l + 1 >= sizeof(name))
				break;
			if (nl)
				name[nl++] = '.';
			for (size_t k = 0; k < l; k++)
				name[nl++] = (char)tolower(q[pos + k]);
			pos += l;
		}
		name[nl] = '\0';
		if (pos + 5 > (size_t)n)
			continue;
		pos++;
		qtype = (unsigned)q[pos] << 8 | q[pos + 1];
		pos += 4;
		fprintf(log_file, "query %s %s\n", name,
			qtype == 1    ? "A"
			: qtype == 28 ? "AAAA"
				      : "OTHER");
		fflush(log_file);
		/* Header and question as asked; answers point back at the name (0xc00c). */
		memcpy(r, q, pos);
		r[2] = (unsigned char)(0x84 | (q[2] & 0x01)); /* QR, AA, RD as asked */
		r[3] = 0x80;				      /* RA */
		r[6] = r[7] = r[8] = r[9] = r[10] = r[11] = 0;
		rl = pos;
		for (size_t k = 0; k < n_table; k++) {
			struct entry *e = &table[k];
			size_t alen = e->family == AF_INET ? 4 : 16;

			if (strcasecmp(e->name, name))
				continue;
			known = true;
			if ((qtype == 1 && e->family != AF_INET) ||
			    (qtype == 28 && e->family != AF_INET6) || (qtype != 1 && qtype != 28))
				continue;
			r[rl++] = 0xc0;
			r[rl++] = 0x0c;
			r[rl++] = 0;
			r[rl++] = (unsigned char)qtype;
			r[rl++] = 0;
			r[rl++] = 1;
			r[rl++] = 0;
			r[rl++] = 0;
			r[rl++] = 0;
			r[rl++] = 60;
			r[rl++] = 0;
			r[rl++] = (unsigned char)alen;
			memcpy(r + rl, e->addr, alen);
			rl += alen;
			ans++;
		}
		if (!known)
			r[3] |= 3; /* NXDOMAIN */
		r[7] = (unsigned char)ans;
		sendto(fd, r, rl, 0, (struct sockaddr *)&from, flen);
	}
}
