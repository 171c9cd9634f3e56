/* serve.c - one page over HTTP on 127.0.0.1; see serve.h.
 *
 * One thread serves every client with poll(): sockets never block, so a
 * client that sends its request slowly, never reads the page or keeps a
 * connection open idle holds only its own slot.  A request must arrive
 * whole within REQUEST_MS of its connection (one deadline, set at accept:
 * a byte at a time does not extend it; SONDE_SERVE_REQUEST_MS sets it in
 * milliseconds, for tests); once answered, the client must take some of
 * the page every IDLE_MS.  With MAX_CLIENTS connected, a new connection
 * takes the slot of the oldest client not being sent the page (else of
 * the oldest one), so that slow clients can never hold every slot.
 *
 * Only requests whose Host names this server (127.0.0.1:PORT,
 * localhost:PORT, [::1]:PORT) get the page; any other Host, or none, gets
 * 403: a page that a DNS-rebound name asks for is never given out. */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../core/clock.h"
#include "open_url.h"
#include "options.h"

#define MAX_CLIENTS 64
#define IDLE_MS 10000
#define REQUEST_MS 10000
#define REQUEST_MAX 8192

static volatile sig_atomic_t stopping; /* set by the SIGINT/SIGTERM handler, read by the
                                          serving loop: one thread */

static void on_interrupt(int sig)
{
    (void)sig;
    stopping = 1;
}

enum client_state { READING, WRITING, DRAINING };

typedef struct client {
    int fd;
    enum client_state state;
    char req[REQUEST_MAX];
    size_t got;
    char header[256];
    const char *body;       /* after the header: the page, or a short message */
    size_t header_len, body_len, sent;
    int64_t accepted;       /* ms on the monotonic clock */
    int64_t deadline;       /* ms: accepted + request_ms while READING, then IDLE_MS
                               after the last progress */
} client;

typedef struct server {
    const char *page, *name;
    size_t len;
    int port;
    int64_t request_ms;     /* the whole time a request may take to arrive */
    client clients[MAX_CLIENTS];
    int nclients;
} server;

static int64_t now_ms(void)
{
    return (int64_t)(sonde_clock_ns() / 1000000);
}

/* Whether the request's headers hold exactly one Host, naming this
 * server: 127.0.0.1, localhost or [::1] with the port (the port may be
 * left out only when it is 80). */
static int host_is_ours(const char *req, int port)
{
    const char *value = NULL;
    size_t value_len = 0;
    int hosts = 0;
    for (const char *line = strchr(req, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        if (strncasecmp(line + 1, "host:", 5) != 0)
            continue;
        value = line + 6;
        value += strspn(value, " \t");
        value_len = strcspn(value, "\r\n");
        while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
            value_len--;
        hosts++;
    }
    if (hosts != 1)
        return 0;
    static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char with_port[32];
        int n = snprintf(with_port, sizeof with_port, "%s:%d", names[i], port);
        if ((size_t)n == value_len && strncasecmp(value, with_port, value_len) == 0)
            return 1;
        if (port == 80 && strlen(names[i]) == value_len &&
            strncasecmp(value, names[i], value_len) == 0)
            return 1;
    }
    return 0;
}

/* The response to the request in c->req: the page at / and at its name,
 * for GET and HEAD, when the Host is ours. */
static void respond(const server *sv, client *c)
{
    c->req[c->got] = '\0';
    char method[8] = "", path[1024] = "";
    sscanf(c->req, "%7s %1023s", method, path);
    int head = strcmp(method, "HEAD") == 0;
    char *query = strpbrk(path, "?#");
    if (query)
        *query = '\0';
    const char *status = "200 OK", *type = "text/html; charset=utf-8", *extra = "";
    c->body = sv->page;
    c->body_len = sv->len;
    int whole = strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n");
    if (!whole) {
        status = "431 Request Header Fields Too Large";
        type = "text/plain";
        c->body = "request headers too large\n";
        c->body_len = strlen(c->body);
    } else if (!host_is_ours(c->req, sv->port)) {
        status = "403 Forbidden";
        type = "text/plain";
        c->body = "this page is served only to a Host of 127.0.0.1, localhost or [::1] "
                  "with this port\n";
        c->body_len = strlen(c->body);
    } else if (!head && strcmp(method, "GET") != 0) {
        status = "405 Method Not Allowed";
        extra = "Allow: GET, HEAD\r\n";
        c->body = "";
        c->body_len = 0;
    } else if (strcmp(path, "/") != 0 && (path[0] != '/' || strcmp(path + 1, sv->name) != 0)) {
        status = "404 Not Found";
        type = "text/plain";
        c->body = "not found\n";
        c->body_len = strlen(c->body);
    }
    int n = snprintf(c->header, sizeof c->header,
                     "HTTP/1.0 %s\r\nContent-Type: %s\r\n%sContent-Length: %zu\r\n"
                     "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
                     status, type, extra, c->body_len);
    c->header_len = n > 0 && (size_t)n < sizeof c->header ? (size_t)n : 0;
    if (head)
        c->body_len = 0;
    c->state = WRITING;
    c->sent = 0;
}

/* The request so far: answered once its headers are in (or the buffer is
 * full).  0, or -1 when the client is gone. */
static int on_readable(const server *sv, client *c)
{
    char scratch[512];
    if (c->state == DRAINING) { /* what the client still sends, after the page */
        ssize_t n = recv(c->fd, scratch, sizeof scratch, 0);
        return n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)) ? 0 : -1;
    }
    ssize_t n = recv(c->fd, c->req + c->got, REQUEST_MAX - 1 - c->got, 0);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (n == 0)
        return -1;
    c->got += (size_t)n;
    c->req[c->got] = '\0';
    if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") || c->got == REQUEST_MAX - 1)
        respond(sv, c);
    return 0;
}

/* More of the response.  0, or -1 when the client is gone. */
static int on_writable(client *c)
{
    while (c->sent < c->header_len + c->body_len) {
        const char *from = c->sent < c->header_len ? c->header + c->sent
                                                   : c->body + (c->sent - c->header_len);
        size_t left = c->sent < c->header_len ? c->header_len - c->sent
                                              : c->header_len + c->body_len - c->sent;
        ssize_t n = send(c->fd, from, left, MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->sent += (size_t)n;
        c->deadline = now_ms() + IDLE_MS;
    }
    /* All sent: say so, and read what the client still sends until it
     * closes, so that closing never resets a connection with the page
     * still on its way. */
    shutdown(c->fd, SHUT_WR);
    c->state = DRAINING;
    return 0;
}

static void drop(server *sv, int i)
{
    close(sv->clients[i].fd);
    sv->clients[i] = sv->clients[--sv->nclients];
}

/* The client whose slot a new connection takes when every slot is held:
 * the oldest one not being sent the page, else the oldest. */
static int oldest_client(const server *sv)
{
    int oldest = -1, oldest_writing = -1;
    for (int i = 0; i < sv->nclients; i++) {
        const client *c = &sv->clients[i];
        int *pick = c->state == WRITING ? &oldest_writing : &oldest;
        if (*pick < 0 || c->accepted < sv->clients[*pick].accepted)
            *pick = i;
    }
    return oldest >= 0 ? oldest : oldest_writing;
}

static void accept_clients(server *sv, int listener)
{
    for (;;) {
        int fd = accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        if (sv->nclients == MAX_CLIENTS)
            drop(sv, oldest_client(sv));
        client *c = &sv->clients[sv->nclients++];
        c->fd = fd;
        c->state = READING;
        c->got = 0;
        c->accepted = now_ms();
        c->deadline = c->accepted + sv->request_ms;
    }
}

/* REQUEST_MS, or SONDE_SERVE_REQUEST_MS when it is a number of ms from 1
 * to 600000. */
static int64_t request_ms(void)
{
    const char *env = getenv("SONDE_SERVE_REQUEST_MS");
    char *end;
    long ms = env ? strtol(env, &end, 10) : 0;
    return env && *env && !*end && ms >= 1 && ms <= 600000 ? ms : REQUEST_MS;
}

/* Serves until stopping is set; SIGINT and SIGTERM stay blocked but while
 * waiting in ppoll, so that none is missed. */
static void serve_loop(server *sv, int listener, const sigset_t *waiting)
{
    struct pollfd fds[MAX_CLIENTS + 1];
    while (!stopping) {
        int64_t now = now_ms(), wait = IDLE_MS;
        for (int i = sv->nclients - 1; i >= 0; i--)
            if (sv->clients[i].deadline <= now)
                drop(sv, i);
        fds[0] = (struct pollfd){ .fd = listener, .events = POLLIN };
        for (int i = 0; i < sv->nclients; i++) {
            const client *c = &sv->clients[i];
            fds[i + 1] = (struct pollfd){ .fd = c->fd,
                                          .events = c->state == WRITING ? POLLOUT : POLLIN };
            if (c->deadline - now < wait)
                wait = c->deadline - now;
        }
        struct timespec ts = { .tv_sec = wait / 1000, .tv_nsec = (wait % 1000) * 1000000 };
        int ready = ppoll(fds, (nfds_t)sv->nclients + 1, &ts, waiting);
        if (ready <= 0)
            continue; /* a signal, or a deadline */
        int n = sv->nclients;
        for (int i = n - 1; i >= 0; i--) {
            client *c = &sv->clients[i];
            short ev = fds[i + 1].revents;
            int gone = (ev & (POLLERR | POLLNVAL)) ||
                       ((ev & (POLLIN | POLLHUP)) && c->state != WRITING && on_readable(sv, c) < 0) ||
                       ((ev & (POLLOUT | POLLHUP)) && c->state == WRITING && on_writable(c) < 0);
            if (gone)
                drop(sv, i);
        }
        if (fds[0].revents & POLLIN)
            accept_clients(sv, listener);
    }
}

int serve_page(const char *page, size_t len, const char *name, int port, int open)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot serve: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* never other interfaces */
    socklen_t alen = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &alen) < 0) {
        int e = errno;
        close(fd);
        return cli_fail(SONDE_EXIT_FAILED, "cannot serve on 127.0.0.1:%d: %s%s", port,
                        strerror(e), e == EADDRINUSE ? " (pick another with --port)" : "");
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(addr.sin_port));
    printf("serving %s (Ctrl-C to stop)\n", url);
    fflush(stdout);
    if (open)
        open_url(url);
    sigset_t stop_signals, saved, waiting;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop_signals, &saved);
    waiting = saved;
    sigdelset(&waiting, SIGINT);
    sigdelset(&waiting, SIGTERM);
    struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    static server sv; /* 64 request buffers, off the stack; used by this thread only */
    sv = (server){ .page = page, .name = name, .len = len, .port = ntohs(addr.sin_port),
                   .request_ms = request_ms() };
    serve_loop(&sv, fd, &waiting);
    while (sv.nclients > 0)
        drop(&sv, sv.nclients - 1);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigprocmask(SIG_SETMASK, &saved, NULL);
    close(fd);
    return 0;
}
