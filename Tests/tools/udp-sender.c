/* A sender of known traffic for the application tests (Tests/tools/apps-container-test):
 *   udp-sender ADDRESS PORT PAYLOAD COUNT [linger]
 * prints "pid P", sends COUNT UDP datagrams of PAYLOAD bytes each to ADDRESS:PORT (IPv4) from
 * one socket, one every millisecond, then prints "sent N errors E" and exits. On SIGTERM it
 * stops after the datagram in hand and prints the same line: how many sendto() took, so a unit
 * restarted mid-traffic says exactly what it sent. With "linger" it then waits for SIGTERM
 * before exiting: its cgroup stays until the test has seen the daemon name it. Built static by the test (gcc -static), so it runs in
 * any container tree with no library of its own. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static void stop(int signal) { (void)signal; stopping = 1; }

int main(int argc, char **argv) {
    if (argc != 5 && !(argc == 6 && strcmp(argv[5], "linger") == 0)) {
        fprintf(stderr, "usage: udp-sender ADDRESS PORT PAYLOAD COUNT [linger]\n");
        return 64;
    }
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[2])) };
    if (inet_pton(AF_INET, argv[1], &to.sin_addr) != 1) { fprintf(stderr, "bad address %s\n", argv[1]); return 64; }
    long payload = atol(argv[3]), count = atol(argv[4]);
    if (payload < 0 || payload > 1400 || count < 0) { fprintf(stderr, "bad payload or count\n"); return 64; }
    struct sigaction action = { .sa_handler = stop };
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) { perror("socket"); return 1; }
    static char buffer[1400];
    memset(buffer, 'x', sizeof buffer);
    long sent = 0, errors = 0;
    struct timespec pace = { 0, 1000000 };
    for (long i = 0; i < count && !stopping; i++) {
        if (sendto(fd, buffer, (size_t)payload, 0, (struct sockaddr *)&to, sizeof to) == payload) sent++;
        else errors++;
        nanosleep(&pace, NULL);
    }
    printf("sent %ld errors %ld\n", sent, errors);
    fflush(stdout);
    if (argc == 6) while (!stopping) pause();
    return errors ? 1 : 0;
}
