<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ja" sourcelanguage="en">
  <context>
    <name>Draftwise</name>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="61" />
      <source>Check this machine</source>
      <translation>このマシンをチェック</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="63" />
      <source>Run again</source>
      <translation>もう一度実行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="64" />
      <source>Run the check again</source>
      <translation>チェックをもう一度実行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/check_dialog.py" line="65" />
      <source>Check steps</source>
      <translation>チェックの手順</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="157" />
      <source>Search models…</source>
      <translation>モデルを検索…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="158" />
      <source>Search models</source>
      <translation>モデルを検索</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="159" />
      <source>Model library</source>
      <translation>モデルライブラリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="160" />
      <source>+ Add folder</source>
      <translation>+ フォルダを追加</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="161" />
      <source>Add a folder of models</source>
      <translation>モデルのフォルダを追加</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="162" />
      <source>Browse…</source>
      <translation>参照…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="163" />
      <source>Open a model file</source>
      <translation>モデルファイルを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="164" />
      <source>Folders</source>
      <translation>フォルダ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="165" />
      <source>Model folders</source>
      <translation>モデルフォルダ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="166" />
      <source>No models yet.

Add a folder with .gguf models,
or drop a .gguf file on this window.</source>
      <translation>まだモデルがありません。

.gguf モデルのあるフォルダを追加するか、
.gguf ファイルをこのウィンドウにドロップしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="206" />
      <source>No folders yet</source>
      <translation>フォルダはまだありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="210" />
      <source>Remove from the library</source>
      <translation>ライブラリから削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/library_panel.py" line="214" />
      <source>Scan again</source>
      <translation>再スキャン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="70" />
      <source>Engine log</source>
      <translation>エンジンログ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="71" />
      <source>Filter the log…</source>
      <translation>ログを絞り込む…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="72" />
      <source>Filter the log</source>
      <translation>ログを絞り込む</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>All lines</source>
      <translation>すべての行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>Warnings and errors</source>
      <translation>警告とエラー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="76" />
      <source>Errors only</source>
      <translation>エラーのみ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="79" />
      <source>Log level</source>
      <translation>ログレベル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="80" />
      <source>Copy</source>
      <translation>コピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="81" />
      <source>Copy the log</source>
      <translation>ログをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="82" />
      <source>Save…</source>
      <translation>保存…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="83" />
      <source>Save the log to a file</source>
      <translation>ログをファイルに保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="84" />
      <source>Clear</source>
      <translation>クリア</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="85" />
      <source>Clear the log</source>
      <translation>ログをクリア</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="101" />
      <source>{0} lines</source>
      <translation>{0} 行</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="103" />
      <source>({0} older lines dropped)</source>
      <translation>（古い {0} 行は破棄されました）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="110" />
      <source>Save the engine log</source>
      <translation>エンジンログを保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="111" />
      <source>Log files (*.log *.txt)</source>
      <translation>ログファイル (*.log *.txt)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/logs_panel.py" line="116" />
      <source>Could not save: {0}</source>
      <translation>保存できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="642" />
      <source>URL copied</source>
      <translation>URL をコピーしました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="643" />
      <source>API key copied</source>
      <translation>API キーをコピーしました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="679" />
      <source>&amp;Open model…</source>
      <translation>モデルを開く(&amp;O)…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="680" />
      <source>&amp;Add folder…</source>
      <translation>フォルダを追加(&amp;A)…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="681" />
      <source>&amp;Launch</source>
      <translation>起動(&amp;L)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="682" />
      <source>&amp;Stop</source>
      <translation>停止(&amp;S)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="683" />
      <source>&amp;Check this machine</source>
      <translation>このマシンをチェック(&amp;C)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="684" />
      <source>&amp;Install engine</source>
      <translation>エンジンをインストール(&amp;I)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="685" />
      <source>Logs</source>
      <translation>ログ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="686" />
      <source>Show or hide the engine log</source>
      <translation>エンジンログの表示／非表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="687" />
      <source>&amp;Quit</source>
      <translation>終了(&amp;Q)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="688" />
      <source>&amp;About Draftwise</source>
      <translation>Draftwise について(&amp;A)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="689" />
      <source>&amp;File</source>
      <translation>ファイル(&amp;F)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="690" />
      <source>&amp;Engine</source>
      <translation>エンジン(&amp;E)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="691" />
      <source>&amp;View</source>
      <translation>表示(&amp;V)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="692" />
      <source>&amp;Help</source>
      <translation>ヘルプ(&amp;H)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="693" />
      <source>Language</source>
      <translation>言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="698" />
      <source>Speculation</source>
      <translation>投機的デコード</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="699" />
      <source>MTP / draft:</source>
      <translation>MTP / ドラフト:</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="700" />
      <source>Auto</source>
      <translation>自動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="701" />
      <source>Speculation automatic</source>
      <translation>投機的デコードを自動にする</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="702" />
      <source>Off</source>
      <translation>オフ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="703" />
      <source>Speculation off</source>
      <translation>投機的デコードをオフにする</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="704" />
      <source>Draft model</source>
      <translation>ドラフトモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="705" />
      <source>automatic</source>
      <translation>自動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="706" />
      <source>Draft model file</source>
      <translation>ドラフトモデルのファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="708" />
      <source>Choose a draft model file</source>
      <translation>ドラフトモデルのファイルを選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="709" />
      <source>Memory</source>
      <translation>メモリ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="711" />
      <source>Context</source>
      <translation>コンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="712" />
      <source>Context length</source>
      <translation>コンテキスト長</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="713" />
      <source>Reset to auto</source>
      <translation>自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="714" />
      <source>Choose the context length automatically</source>
      <translation>コンテキスト長を自動で選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="715" />
      <source>KV cache</source>
      <translation>KV キャッシュ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="716" />
      <source>KV cache type</source>
      <translation>KV キャッシュの型</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="718" />
      <source>Engine</source>
      <translation>エンジン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="720" />
      <source>Install engine</source>
      <translation>エンジンをインストール</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="721" />
      <source>Install the llama.cpp engine</source>
      <translation>llama.cpp エンジンをインストール</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="722" />
      <source>Engine installation progress</source>
      <translation>エンジンのインストール状況</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="723" />
      <source>Launch</source>
      <translation>起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="724" />
      <source>Launch the model</source>
      <translation>モデルを起動</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="725" />
      <source>Start the engine with this model (Ctrl+L)</source>
      <translation>このモデルでエンジンを起動 (Ctrl+L)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="726" />
      <source>Stop</source>
      <translation>停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="727" />
      <source>Stop the engine</source>
      <translation>エンジンを停止</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="728" />
      <source>Stop the engine (Ctrl+.)</source>
      <translation>エンジンを停止 (Ctrl+.)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="729" />
      <source>Advanced</source>
      <translation>詳細設定</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="730" />
      <source>Show advanced settings</source>
      <translation>詳細設定を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="731" />
      <source>Model details</source>
      <translation>モデルの詳細</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="732" />
      <source>Show model details</source>
      <translation>モデルの詳細を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="733" />
      <source>Extra engine arguments</source>
      <translation>エンジンの追加引数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="734" />
      <source>e.g. --spec-draft-n-max 4</source>
      <translation>例: --spec-draft-n-max 4</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="736" />
      <source>Profiles</source>
      <translation>プロファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="738" />
      <source>Apply</source>
      <translation>適用</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="739" />
      <source>Save as…</source>
      <translation>名前を付けて保存…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="740" />
      <source>Delete</source>
      <translation>削除</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="741" />
      <source>This model</source>
      <translation>このモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="742" />
      <source>Reset to automatic</source>
      <translation>自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="743" />
      <source>Reset this model's settings to automatic</source>
      <translation>このモデルの設定を自動に戻す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="745" />
      <source>Port</source>
      <translation>ポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="746" />
      <source>Port the engine listens on</source>
      <translation>エンジンが待ち受けるポート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="747" />
      <source>Allow other computers on my network (with the API key)</source>
      <translation>ネットワーク上の他のコンピュータからの接続を許可する（API キーが必要）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="748" />
      <source>Allow other computers on my network</source>
      <translation>ネットワーク上の他のコンピュータからの接続を許可する</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="750" />
      <source>Engine command (the API key is passed in the environment)</source>
      <translation>エンジンのコマンド（API キーは環境変数で渡されます）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="751" />
      <source>Engine command</source>
      <translation>エンジンのコマンド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="753" />
      <source>Copy the endpoint URL</source>
      <translation>エンドポイント URL をコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="754" />
      <source>Open chat</source>
      <translation>チャットを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="755" />
      <source>Open the chat page in the browser</source>
      <translation>ブラウザでチャットページを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="757" />
      <source>Copy the API key</source>
      <translation>API キーをコピー</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="760" />
      <source>Show log</source>
      <translation>ログを表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="761" />
      <source>Dismiss</source>
      <translation>閉じる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="762" />
      <source>Dismiss this notice</source>
      <translation>このお知らせを閉じる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="763" />
      <source>Try it again</source>
      <translation>もう一度試す</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="764" />
      <source>Forget that this drafter made the engine fail, and use it at the next Launch</source>
      <translation>このドラフターでエンジンが失敗した記録を消し、次の起動で使います</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="766" />
      <source>Show Draftwise</source>
      <translation>Draftwise を表示</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="877" />
      <source>Auto ({0})</source>
      <translation>自動 ({0})</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="902" />
      <source>Why: </source>
      <translation>理由: </translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="914" />
      <source>Planned vs actual (the engine's own buffer sizes)</source>
      <translation>計画と実際（エンジン自身が報告したバッファサイズ）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="917" />
      <source>planned</source>
      <translation>計画</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="917" />
      <source>actual</source>
      <translation>実際</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="930" />
      <source>unusable</source>
      <translation>使用不可</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="933" />
      <source>Looking for engines…</source>
      <translation>エンジンを探しています…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="933" />
      <source>No engine found</source>
      <translation>エンジンが見つかりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="971" />
      <source>context {0}</source>
      <translation>コンテキスト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="973" />
      <source>KV {0}</source>
      <translation>KV {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="975" />
      <source>speculation {0}</source>
      <translation>投機的デコード {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="977" />
      <source>draft {0}</source>
      <translation>ドラフト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="979" />
      <source>extra arguments</source>
      <translation>追加引数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="980" />
      <source>All automatic.</source>
      <translation>すべて自動です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1021" />
      <source>key {0}</source>
      <translation>キー {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1085" />
      <source>Open a model</source>
      <translation>モデルを開く</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1085" />
      <source>GGUF models (*.gguf)</source>
      <translation>GGUF モデル (*.gguf)</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1098" />
      <source>Choose a draft model</source>
      <translation>ドラフトモデルを選ぶ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1103" />
      <source>Save profile</source>
      <translation>プロファイルを保存</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1103" />
      <source>Name of the profile:</source>
      <translation>プロファイル名:</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1148" />
      <source>About Draftwise</source>
      <translation>Draftwise について</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1149" />
      <source>Draftwise {0}
Run a local LLM with llama.cpp; speculative decoding and MTP are set up for you.</source>
      <translation>Draftwise {0}
llama.cpp でローカル LLM を動かします。投機的デコードと MTP は自動で設定されます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1212" />
      <source>The engine is running</source>
      <translation>エンジンが実行中です</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1213" />
      <source>The engine is still running. Stop it, or keep it running in the tray?</source>
      <translation>エンジンはまだ実行中です。停止しますか？それともトレイで実行を続けますか？</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1214" />
      <source>Stop the engine and quit</source>
      <translation>エンジンを停止して終了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1215" />
      <source>Keep running in the tray</source>
      <translation>トレイで実行を続ける</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/main_window.py" line="1236" />
      <source>The engine keeps running. Use the tray icon to stop it.</source>
      <translation>エンジンは実行を続けます。停止するにはトレイアイコンを使ってください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="35" />
      <source>{0} of {1} free</source>
      <translation>空き {1} のうち {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="56" />
      <source>left: {0}</source>
      <translation>残り: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/ui/memory_bar.py" line="56" />
      <source>over: {0}</source>
      <translation>超過: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="122" />
      <source>Could not plan memory: {0}</source>
      <translation>メモリを計画できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="158" />
      <source>The extra arguments cannot be read: {0}.</source>
      <translation>追加引数を読み取れません: {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="303" />
      <source>{0} is not a .gguf model file.</source>
      <translation>{0} は .gguf モデルファイルではありません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="305" />
      <source>{0} does not exist.</source>
      <translation>{0} は存在しません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="403" />
      <source>Could not clear the record: {0}</source>
      <translation>記録を消せませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="531" />
      <source>Could not plan: {0}</source>
      <translation>計画できませんでした: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="551" />
      <source>Stop {0} to launch this model.</source>
      <translation>このモデルを起動するには {0} を停止してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="552" />
      <source>The engine is running.</source>
      <translation>エンジンは実行中です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="554" />
      <source>Choose a model first.</source>
      <translation>先にモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="556" />
      <source>Reading the model…</source>
      <translation>モデルを読み込み中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="568" />
      <source>Planning…</source>
      <translation>計画中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="576" />
      <source>The model does not fit in this machine's memory.</source>
      <translation>このモデルはこのマシンのメモリに収まりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/app.py" line="664" />
      <source>Could not save your settings to {0}: {1}</source>
      <translation>設定を {0} に保存できませんでした: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="193" />
      <source>No engine is installed. Press “Install engine” (about 20 minutes, once).</source>
      <translation>エンジンがインストールされていません。「エンジンをインストール」を押してください（初回のみ、約 20 分）。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="195" />
      <source>The engine cannot be used: {0}</source>
      <translation>このエンジンは使えません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="200" />
      <source>Installing the engine…</source>
      <translation>エンジンをインストール中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="206" />
      <source>No engine found on this machine.</source>
      <translation>このマシンにエンジンが見つかりません。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="222" />
      <source>Preparing…</source>
      <translation>準備中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="241" />
      <source>The engine is installed.</source>
      <translation>エンジンをインストールしました。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/engine.py" line="248" />
      <source>Installing the engine failed: {0}</source>
      <translation>エンジンのインストールに失敗しました: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/i18n.py" line="23" />
      <source>System language</source>
      <translation>システムの言語</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="88" />
      <source>This build of Draftwise cannot start engines ({0}).</source>
      <translation>この Draftwise のビルドはエンジンを起動できません ({0})。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="89" />
      <source>Reinstall Draftwise.</source>
      <translation>Draftwise を再インストールしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="166" />
      <source>Look at the log for details.</source>
      <translation>詳しくはログを見てください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="215" />
      <source>Idle</source>
      <translation>待機中</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="217" />
      <source>Starting… {0}</source>
      <translation>起動中… {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="219" />
      <source>Loading model… {0}</source>
      <translation>モデルを読み込み中… {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="221" />
      <source>no progress for {0}; you can stop it.</source>
      <translation>{0} 進展がありません。停止できます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="224" />
      <source> (started in {0})</source>
      <translation>（{0} で起動）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="226" />
      <source>Ready</source>
      <translation>準備完了</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="228" />
      <source>Stopping…</source>
      <translation>停止中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="230" />
      <source>Stopped</source>
      <translation>停止しました</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="232" />
      <source>Failed — {0}</source>
      <translation>失敗 — {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="233" />
      <source>Failed</source>
      <translation>失敗</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="240" />
      <source>Next step: {0}</source>
      <translation>次にすること: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="242" />
      <source>From the log: {0}</source>
      <translation>ログより: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/launch.py" line="249" />
      <source>Speculation was turned off: {0}</source>
      <translation>投機的デコードをオフにしました: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="31" />
      <source>Name</source>
      <translation>名前</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="32" />
      <source>Arch</source>
      <translation>アーキ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="33" />
      <source>Params</source>
      <translation>パラメータ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="34" />
      <source>Quant</source>
      <translation>量子化</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="35" />
      <source>Size</source>
      <translation>サイズ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="37" />
      <source>MTP</source>
      <translation>MTP</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="38" />
      <source>Fits</source>
      <translation>収まる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="41" />
      <source>Architecture</source>
      <translation>アーキテクチャ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="42" />
      <source>Parameters</source>
      <translation>パラメータ数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="43" />
      <source>Quantization</source>
      <translation>量子化</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="44" />
      <source>Size on disk</source>
      <translation>ディスク上のサイズ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="45" />
      <source>Trained context length</source>
      <translation>学習時のコンテキスト長</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="46" />
      <source>Built-in MTP head (faster generation)</source>
      <translation>内蔵の MTP ヘッド（生成が速くなります）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="47" />
      <source>Whether it fits in this machine's memory</source>
      <translation>このマシンのメモリに収まるかどうか</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="56" />
      <source>✓ fits</source>
      <translation>✓ 収まる</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="56" />
      <source>◐ partly</source>
      <translation>◐ 一部</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="56" />
      <source>✗ too big</source>
      <translation>✗ 大きすぎ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="116" />
      <source>Fits in this machine's memory</source>
      <translation>このマシンのメモリに収まります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="117" />
      <source>Fits only partly on the GPU: slower</source>
      <translation>GPU には一部しか収まりません: 遅くなります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="118" />
      <source>Too big for this machine's memory</source>
      <translation>このマシンのメモリには大きすぎます</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="120" />
      <source>Has a built-in MTP head: faster with speculative decoding</source>
      <translation>MTP ヘッド内蔵: 投機的デコードで速くなります</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="131" />
      <source>unreadable</source>
      <translation>読み取り不可</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="326" />
      <source>Scanning… {0} models</source>
      <translation>スキャン中… {0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="328" />
      <source>Add a folder with .gguf models, or drop a file here.</source>
      <translation>.gguf モデルのあるフォルダを追加するか、ファイルをここにドロップしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="330" />
      <source>No models found in these folders.</source>
      <translation>これらのフォルダにモデルは見つかりませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="333" />
      <source>{0} of {1} models</source>
      <translation>{1} 個中 {0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/library.py" line="334" />
      <source>{0} models</source>
      <translation>{0} 個のモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="70" />
      <source>Check</source>
      <translation>チェック</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="83" />
      <source>Checking this machine…</source>
      <translation>このマシンをチェック中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="85" />
      <source>Runs a tiny model on the engine to prove everything works here.</source>
      <translation>小さなモデルをエンジンで動かし、すべてが動作することを確かめます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="87" />
      <source>This machine is ready: the engine starts and generates text.</source>
      <translation>このマシンは準備完了です: エンジンが起動し、テキストを生成します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="90" />
      <source>The check did not finish.</source>
      <translation>チェックは完了しませんでした。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/machine_check.py" line="91" />
      <source>Problem at “{0}”: {1}</source>
      <translation>「{0}」で問題: {1}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="62" />
      <source>No model chosen</source>
      <translation>モデルが選ばれていません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="70" />
      <source>This file cannot be used</source>
      <translation>このファイルは使えません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="73" />
      <source>Choose a model on the left, drop a .gguf file here, or press Ctrl+O.</source>
      <translation>左でモデルを選ぶか、.gguf ファイルをここにドロップするか、Ctrl+O を押してください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="79" />
      <source>{0} ctx</source>
      <translation>コンテキスト {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="87" />
      <source>File</source>
      <translation>ファイル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="91" />
      <source> in {0} files</source>
      <translation>（{0} ファイル）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="92" />
      <source>Layers</source>
      <translation>レイヤー数</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="93" />
      <source>Trained context</source>
      <translation>学習時のコンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="93" />
      <source>{0} tokens</source>
      <translation>{0} トークン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="96" />
      <source>Experts</source>
      <translation>エキスパート</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="96" />
      <source>{0} ({1} used per token)</source>
      <translation>{0}（トークンごとに {1} 個を使用）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="98" />
      <source>MTP head</source>
      <translation>MTP ヘッド</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="98" />
      <source>yes, built in</source>
      <translation>あり（内蔵）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="98" />
      <source>declared, but not in this file</source>
      <translation>宣言されていますが、このファイルにはありません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="100" />
      <source>Sliding window</source>
      <translation>スライディングウィンドウ</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="102" />
      <source>Vocabulary</source>
      <translation>語彙</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="104" />
      <source>Vision</source>
      <translation>ビジョン</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="115" />
      <source>Missing part(s): {0}. Download them into the same folder.</source>
      <translation>欠けている部分: {0}。同じフォルダにダウンロードしてください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="117" />
      <source>This is a vision projector (mmproj), not a model; choose the model it belongs to.</source>
      <translation>これはビジョンプロジェクター (mmproj) でモデルではありません。対応するモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/model_details.py" line="119" />
      <source>This file only helps another model draft tokens ({0}); choose the main model and it is found automatically.</source>
      <translation>このファイルは別のモデルのドラフト用です ({0})。メインのモデルを選べば自動で見つかります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="27" />
      <source>weights</source>
      <translation>重み</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="28" />
      <source>context</source>
      <translation>コンテキスト</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="29" />
      <source>drafter</source>
      <translation>ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="30" />
      <source>work</source>
      <translation>作業領域</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="101" />
      <source>RAM</source>
      <translation>RAM</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="237" />
      <source>{0} (auto)</source>
      <translation>{0}（自動）</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="243" />
      <source>Partly on the GPU</source>
      <translation>一部 GPU</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="243" />
      <source>Does not fit</source>
      <translation>収まりません</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="260" />
      <source>Everything runs on {0} with {1} to spare.</source>
      <translation>すべて {0} で動き、{1} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="262" />
      <source>The model is split between the GPU and RAM, with {0} to spare.</source>
      <translation>モデルは GPU と RAM に分けて置かれ、{0} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="264" />
      <source>Everything fits in RAM with {0} to spare.</source>
      <translation>すべて RAM に収まり、{0} の余裕があります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="265" />
      <source>{0} context, {1} KV cache.</source>
      <translation>コンテキスト {0}、KV キャッシュ {1}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="268" />
      <source>The {0} fits as well.</source>
      <translation>{0} も収まります。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/plan.py" line="277" />
      <source>total</source>
      <translation>合計</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="25" />
      <source>draft model</source>
      <translation>ドラフトモデル</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="26" />
      <source>EAGLE-3 drafter</source>
      <translation>EAGLE-3 ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="27" />
      <source>DFlash drafter</source>
      <translation>DFlash ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="28" />
      <source>DSpark drafter</source>
      <translation>DSpark ドラフター</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="29" />
      <source>n-gram lookup</source>
      <translation>n-gram 照合</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="144" />
      <source>Leave empty: Draftwise looks for an MTP head or a draft model beside the model.</source>
      <translation>空欄のままにすると、Draftwise が MTP ヘッドまたはモデルの隣にあるドラフトモデルを探します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="146" />
      <source>Missing: {0}</source>
      <translation>見つかりません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="148" />
      <source>Not a file: {0}</source>
      <translation>ファイルではありません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="150" />
      <source>Not a GGUF model: {0}</source>
      <translation>GGUF モデルではありません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="152" />
      <source>This is the model itself; choose a smaller draft model.</source>
      <translation>これはモデル自身です。より小さなドラフトモデルを選んでください。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="154" />
      <source>Vocabulary differs: {0}. A draft must come from the same model family.</source>
      <translation>語彙が異なります: {0}。ドラフトは同じモデルファミリーのものが必要です。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="155" />
      <source>OK — {0}</source>
      <translation>OK — {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="161" />
      <source>Speculative type: {0}</source>
      <translation>投機デコードの種類: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="179" />
      <source>Cannot start like this: {0}</source>
      <translation>このままでは起動できません: {0}</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="183" />
      <source>Deciding…</source>
      <translation>判定中…</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="186" />
      <source>Speculation is off, as you chose.</source>
      <translation>選択どおり、投機的デコードはオフです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="189" />
      <source>A drafter was left out because the engine could not start with it last time: the model runs without speculation.</source>
      <translation>前回このドラフターではエンジンが起動できなかったため外しました。モデルは投機デコードなしで動きます。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="192" />
      <source>No drafter found: the model runs without speculation.</source>
      <translation>ドラフターが見つかりません: 投機的デコードなしで実行します。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="196" />
      <source>MTP head found in the model: speculation on.</source>
      <translation>モデルに MTP ヘッドがあります: 投機的デコードはオンです。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="198" />
      <source>Found {0} beside the model: speculation on ({1}).</source>
      <translation>モデルの隣に {0} が見つかりました: 投機的デコードはオンです ({1})。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="200" />
      <source>Using your draft model {0} ({1}).</source>
      <translation>指定されたドラフトモデル {0} を使います ({1})。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="202" />
      <source>Your own --spec-type {0} is used.</source>
      <translation>指定された --spec-type {0} を使います。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="203" />
      <source>Speculation on: {0}.</source>
      <translation>投機的デコードはオン: {0}。</translation>
    </message>
    <message>
      <location filename="../../app/draftwise/viewmodels/speculation.py" line="228" />
      <source>Fix the draft model first (see the message under the field).</source>
      <translation>先にドラフトモデルを直してください (欄の下の説明を参照)。</translation>
    </message>
    <message>
      <source>Draftwise cannot start {0} yet; choose a llama.cpp engine.</source>
      <translation type="vanished">Draftwise はまだ {0} を起動できません。llama.cpp エンジンを選んでください。</translation>
    </message>
    <message>
      <source>Estimated roughly: the exact planner is not available in this build.</source>
      <translation type="vanished">おおよその見積もりです: このビルドには正確なプランナーがありません。</translation>
    </message>
    <message>
      <source>It needs about {0} but {1} is free.</source>
      <translation type="vanished">約 {0} 必要ですが、空きは {1} です。</translation>
    </message>
    <message>
      <source>OK — {0} ({1})</source>
      <translation type="vanished">OK — {0} ({1})</translation>
    </message>
  </context>
</TS>
