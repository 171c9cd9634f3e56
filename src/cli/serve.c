/* serve.c - one page over HTTP on 127.0.0.1; see serve.h. */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "open_url.h"
#include "options.h"

static volatile sig_atomic_t stopping;

static void on_interrupt(int sig)
{
    (void)sig;
    stopping = 1;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

/* Answers one request on fd: the request line is all that is read. */
static void answer(int fd, const char *page, size_t len, const char *name)
{
    char req[2048];
    ssize_t n = recv(fd, req, sizeof req - 1, 0);
    if (n <= 0)
        return;
    req[n] = '\0';
    char method[8] = "", path[1024] = "";
    sscanf(req, "%7s %1023s", method, path);
    int head = strcmp(method, "HEAD") == 0;
    char header[256];
    if (!head && strcmp(method, "GET") != 0) {
        const char *r = "HTTP/1.0 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"
                        "Content-Length: 0\r\nConnection: close\r\n\r\n";
        send_all(fd, r, strlen(r));
        return;
    }
    char *query = strpbrk(path, "?#");
    if (query)
        *query = '\0';
    if (strcmp(path, "/") != 0 && (path[0] != '/' || strcmp(path + 1, name) != 0)) {
        const char *r = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\n"
                        "Content-Length: 10\r\nConnection: close\r\n\r\nnot found\n";
        send_all(fd, r, strlen(r));
        return;
    }
    int hl = snprintf(header, sizeof header,
                      "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                      "Content-Length: %zu\r\nCache-Control: no-store\r\n"
                      "Connection: close\r\n\r\n", len);
    send_all(fd, header, (size_t)hl);
    if (!head)
        send_all(fd, page, len);
}

int serve_page(const char *page, size_t len, const char *name, int port, int open)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cli_fail(SONDE_EXIT_FAILED, "cannot serve: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* never other interfaces */
    socklen_t alen = sizeof addr;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 16) < 0 ||
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
    struct sigaction sa = { .sa_handler = on_interrupt }, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    while (!stopping) {
        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            break;
        }
        struct timeval tv = { 5, 0 }; /* a client that says nothing is let go */
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        answer(c, page, len, name);
        close(c);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    close(fd);
    return 0;
}
