/* view_assets.h - sonde view's script and style sheet, from src/page/
 * (embedded at build time by src/page/tools/embed_assets.py). */
#ifndef SONDE_VIEW_ASSETS_H
#define SONDE_VIEW_ASSETS_H

extern const char sonde_view_js[];
extern const char sonde_view_css[];

#endif
