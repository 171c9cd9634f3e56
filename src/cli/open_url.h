/* open_url.h - showing a page in the user's browser ($BROWSER, else
 * xdg-open). */
#ifndef SONDE_OPEN_URL_H
#define SONDE_OPEN_URL_H

/* 0, or -1 after printing why no browser could be started. */
int open_url(const char *url);

#endif
